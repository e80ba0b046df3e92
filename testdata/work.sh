#!/bin/sh
# The workload every capture in this folder records: a little shell,
# sort and gzip, so that samples land in several processes, in the kernel
# and in user space. Deterministic in what it does, not in where samples fall.
seq 1 300000 | sort -r | gzip -1 > /dev/null
