# Python at many places of the interpreter for tests/unit/test_unwind.c:
# recursion, generators, a C sort calling back into Python, json, re,
# exceptions; for the CPU time given (seconds).
import json, re, sys, time
def deep(k, f):
    return deep(k - 1, f) if k else f()
def gen(n):
    for i in range(n):
        yield i * i
def work():
    end = time.process_time() + float(sys.argv[1])
    acc = 0
    while time.process_time() < end:
        acc += sum(gen(200))
        acc += len(sorted(range(300), key=lambda x: -x))
        acc += len(json.dumps({"a": list(range(50))}))
        acc += len(re.findall(r"\d+", "a1b22c333" * 20))
        try:
            raise ValueError(acc)
        except ValueError:
            pass
    return acc
deep(40, work)
