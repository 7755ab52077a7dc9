"""A second module of the program: it makes a buffer nobody releases."""
import pyopencl as cl

kept = []


def scratch(ctx, nbytes):
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nbytes)  # LEAK-LINE
    kept.append(buf)
    return buf
