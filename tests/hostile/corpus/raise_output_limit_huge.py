# expect: error
# contract: mka1_sample
# message: output size limit (64 KiB) exceeded
# Lifts the guest's result limit and returns 16 MiB: the studio stops reading at its own cap.
import gc


def grade(sample, item):
    if sample["sample_id"] != "evil":
        return 1.0
    for obj in gc.get_objects():
        if type(obj).__name__ == "Worker":
            obj.output_limit = 10**12
    return {"scores": {"x": 1.0}, "judge": {"blob": "x" * (16 << 20)}}
