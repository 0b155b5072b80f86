# expect: error
# contract: mka1_sample
# message: output size limit (64 KiB) exceeded
def grade(sample, item):
    if sample["sample_id"] != "evil":
        return 1.0
    return {"scores": {"x": 1.0}, "judge": {"blob": "x" * 10_000_000}}
