#!/usr/bin/env python3
# Runs a command as on a kernel older than 6.5: getsockopt(SOL_SOCKET, SO_PEERPIDFD) fails with ENOPROTOOPT, as it
# does there, for the command and everything it starts (a seccomp filter, inherited across fork and exec). Lets a
# test take the daemon's fallback path (a pidfd opened from SO_PEERCRED's pid) on a kernel that has SO_PEERPIDFD.
# Usage: without-peerpidfd.py <command> [args…]
import ctypes
import os
import platform
import struct
import sys

# per machine: the audit arch seccomp reports, and getsockopt's syscall number
MACHINES = {'x86_64': (0xC000003E, 55), 'aarch64': (0xC00000B7, 209)}
SOL_SOCKET = 1
SO_PEERPIDFD = 77
ENOPROTOOPT = 92

BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_RET_K = 0x06
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2


def insn(code, jt, jf, k):
    return struct.pack('=HBBI', code, jt, jf, k)


def arg_low(n):
    # seccomp_data: nr (4), arch (4), instruction_pointer (8), args[6] (8 each); the low word first (little endian)
    return 16 + 8 * n


def main():
    if len(sys.argv) < 2:
        sys.exit('usage: without-peerpidfd.py <command> [args…]')
    machine = platform.machine()
    if machine not in MACHINES:
        sys.exit(f'without-peerpidfd.py: no syscall table for {machine}')
    arch, nr_getsockopt = MACHINES[machine]
    prog = b''.join([
        insn(BPF_LD_W_ABS, 0, 0, 4),
        insn(BPF_JEQ_K, 0, 7, arch),
        insn(BPF_LD_W_ABS, 0, 0, 0),
        insn(BPF_JEQ_K, 0, 5, nr_getsockopt),
        insn(BPF_LD_W_ABS, 0, 0, arg_low(1)),
        insn(BPF_JEQ_K, 0, 3, SOL_SOCKET),
        insn(BPF_LD_W_ABS, 0, 0, arg_low(2)),
        insn(BPF_JEQ_K, 0, 1, SO_PEERPIDFD),
        insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOPROTOOPT),
        insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ])
    count = len(prog) // 8
    buf = ctypes.create_string_buffer(prog, len(prog))

    class SockFprog(ctypes.Structure):
        _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]

    fprog = SockFprog(count, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    # no_new_privs leaves root's capabilities as they are: it only stops exec from gaining privileges
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        sys.exit(f'prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}')
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        sys.exit(f'prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}')
    os.execvp(sys.argv[1], sys.argv[1:])


main()
