"""Python frames a CPU sample may stop in the middle of (tests/cpusamples.sh):
generators feeding generators, exceptions raised deep and caught above, a
class's methods, for ~1 s of CPU after one OpenCL call (recording, and
sampling, start there). Prints a checksum that must not change traced."""
import ctypes
import time

cl = ctypes.CDLL("libOpenCL.so.1")
n = ctypes.c_uint(0)
cl.clGetPlatformIDs(0, None, ctypes.byref(n))


def numbers(k):
    for i in range(k):
        yield i * 3 % 7


def pairs(gen):
    prev = None
    for x in gen:
        if prev is not None:
            yield prev, x
        prev = x


class Bad(Exception):
    pass


class Walker:
    def __init__(self):
        self.caught = 0

    def deep(self, d, x):
        if d == 0:
            if x % 5 == 0:
                raise Bad(x)
            return x
        return self.deep(d - 1, x)

    def run(self, k):
        total = 0
        for a, b in pairs(numbers(k)):
            try:
                total += self.deep(12, a + b)
            except Bad:
                self.caught += 1
        return total


w, total, end = Walker(), 0, time.process_time() + 1.0
rounds = 0
while time.process_time() < end or rounds < 3:
    total += w.run(2000)
    rounds += 1
print("checksum per round", total // rounds, "caught per round", w.caught // rounds)
