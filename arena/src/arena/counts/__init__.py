"""Counting per request: user-space instructions under callgrind, system calls under strace."""
