"""Packs what scripts/gpu-check.sh keeps into a few tar files of at most 16 MiB each.

    python3 pack_outputs.py KEEP_LIST OUT [MAX_ARCHIVES]

KEEP_LIST has one "NAME<TAB>PATH" line per file or folder to keep (NAME: its path inside the
archive). The device tool brings back at most 8 files from $OUT, each under its size limit, so
the kept traces travel as OUT/traces.tar, OUT/traces-2.tar, ... (at most MAX_ARCHIVES, default
3), each closed before it would pass 16 MiB; what does not fit is listed in OUT/left-out.txt
with its size rather than dropped silently. The traces are zstd already: the tars are not
compressed again. Rewritten from scratch at every call (after each step), so a call cut short
still has every file kept until then.
"""

import os
import sys
import tarfile

LIMIT = 16 * 1024 * 1024
BLOCK = 512  # A tar member costs its header (three blocks with a long name) and its data rounded up.


def members(name, path):
    """(name in the archive, path) for a file, or for every file under a folder."""
    if os.path.isfile(path):
        yield name, path
        return
    for root, _, files in os.walk(path):
        for file in sorted(files):
            full = os.path.join(root, file)
            yield os.path.join(name, os.path.relpath(full, path)), full


def tar_cost(path):
    size = os.path.getsize(path)
    return 3 * BLOCK + (size + BLOCK - 1) // BLOCK * BLOCK


def main():
    keep_list, out = sys.argv[1], sys.argv[2]
    max_archives = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    for old in os.listdir(out):
        if (old.startswith("traces") and old.endswith(".tar")) or old == "left-out.txt":
            os.remove(os.path.join(out, old))
    entries = []
    with open(keep_list) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 2 and os.path.exists(parts[1]):
                entries.extend(members(*parts))
    archives, left_out = [], []
    archive, used = None, 0
    end = 2 * BLOCK * 10  # The closing blocks and tarfile's record padding.
    for name, path in entries:
        cost = tar_cost(path)
        if cost + end > LIMIT:
            left_out.append(f"{name}\t{os.path.getsize(path)} bytes: over 16 MiB by itself")
            continue
        if archive is None or used + cost + end > LIMIT:
            if archive is not None:
                archive.close()
                archive = None
            if len(archives) == max_archives:
                left_out.append(f"{name}\t{os.path.getsize(path)} bytes: {max_archives} "
                                "archives of 16 MiB are full")
                continue
            suffix = "" if not archives else f"-{len(archives) + 1}"
            archives.append(os.path.join(out, f"traces{suffix}.tar"))
            archive, used = tarfile.open(archives[-1], "w", format=tarfile.GNU_FORMAT), 0
        archive.add(path, arcname=name)
        used += cost
    if archive is not None:
        archive.close()
    if left_out:
        with open(os.path.join(out, "left-out.txt"), "w") as f:
            f.write("\n".join(left_out) + "\n")
    for path in archives:
        if os.path.getsize(path) > LIMIT:
            sys.exit(f"pack_outputs: {path} is {os.path.getsize(path)} bytes, over 16 MiB")


if __name__ == "__main__":
    main()
