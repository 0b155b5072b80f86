# expect: error
# contract: mka1_sample
# message: output size limit (64 KiB) exceeded
# Lifts the guest's own result limit; the studio's limit still holds.
import gc


def grade(sample, item):
    if sample["sample_id"] != "evil":
        return 1.0
    for obj in gc.get_objects():
        if type(obj).__name__ == "Worker":
            obj.output_limit = 10**12
    return {"scores": {"x": 1.0}, "judge": {"blob": "x" * 300_000}}
