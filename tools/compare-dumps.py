#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares two `mineru-cpp debug-forward --all-logits --steps N --dump DIR` outputs (standard
library only): max and mean |logit error| over every prompt position, top-1 agreement over the
prompt, and how many greedy steps agree from the start.

    tools/compare-dumps.py REFERENCE_DIR CANDIDATE_DIR
"""
import ast
import struct
import sys


def read_npy(path):
    with open(path, "rb") as f:
        if f.read(6) != b"\x93NUMPY":
            raise SystemExit(f"{path}: not an .npy file")
        major = f.read(2)[0]
        length = struct.unpack("<H" if major == 1 else "<I", f.read(2 if major == 1 else 4))[0]
        header = ast.literal_eval(f.read(length).decode("latin1"))
        kind = {"<f4": "f", "<i8": "q", "<i4": "i"}[header["descr"]]
        count = 1
        for d in header["shape"]:
            count *= d
        data = struct.unpack(f"<{count}{kind}", f.read(count * struct.calcsize(kind)))
        return header["shape"], data


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    ref_dir, cand_dir = sys.argv[1:]
    shape, ref = read_npy(f"{ref_dir}/logits_all.npy")
    _, cand = read_npy(f"{cand_dir}/logits_all.npy")
    vocab = shape[-1]
    positions = len(ref) // vocab
    max_err, sum_err, agree = 0.0, 0.0, 0
    for p in range(positions):
        a = ref[p * vocab:(p + 1) * vocab]
        b = cand[p * vocab:(p + 1) * vocab]
        for x, y in zip(a, b):
            e = abs(x - y)
            sum_err += e
            max_err = max(max_err, e)
        agree += max(range(vocab), key=a.__getitem__) == max(range(vocab), key=b.__getitem__)
    _, ref_ids = read_npy(f"{ref_dir}/generated_ids.npy")
    _, cand_ids = read_npy(f"{cand_dir}/generated_ids.npy")
    same = 0
    while same < len(ref_ids) and ref_ids[same] == cand_ids[same]:
        same += 1
    print(f"logits: max |error| {max_err:.4f}, mean {sum_err / (positions * vocab):.5f}; "
          f"top-1 agreement {agree}/{positions}; greedy ids equal for {same} of {len(ref_ids)}")


if __name__ == "__main__":
    main()
