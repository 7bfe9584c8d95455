#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# render_world's output file: an existing file is replaced by a rename (new inode, same
# permissions), a failed write removes nothing, a FIFO gets the picture as a stream, and no
# temporary file is left behind.
# usage: output_files_test.sh MAKE_WORLD RENDER_WORLD
make_world=$1
render_world=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kiln-output-files-XXXXXX") || exit 2
trap 'rm -rf "$scratch"' EXIT
cd "$scratch" || exit 2
mkdir out
failed=0
check() {  # check DESCRIPTION COMMAND...: records a failure when the command fails
    description=$1
    shift
    if ! "$@"; then
        echo "FAILED: $description" >&2
        failed=1
    fi
}
entries() { ls -A out | tr '\n' ' '; }

"$make_world" 10 0.1 > world.txt || exit 2
"$render_world" < world.txt > expected.bmp || exit 2

# An existing picture is replaced whole, by a new file that keeps the old one's permissions.
printf 'an old picture' > out/old.bmp
chmod 640 out/old.bmp
old_inode=$(stat -c %i out/old.bmp)
check "render over an existing file" "$render_world" out/old.bmp < world.txt
check "the new picture is in place" cmp out/old.bmp expected.bmp
check "it is a new file, not the old one truncated" test "$(stat -c %i out/old.bmp)" != "$old_inode"
check "it keeps the old file's permissions" test "$(stat -c %a out/old.bmp)" = 640

# Through a symbolic link the linked file is replaced and the link stays.
ln -s old.bmp out/link.bmp
printf 'an old picture' > out/old.bmp
check "render through a link" "$render_world" out/link.bmp < world.txt
check "the link stays a link" test -L out/link.bmp
check "the linked file has the picture" cmp out/old.bmp expected.bmp

# A device that fails every write (/dev/full, reached through a link so that nothing could ever
# remove the device itself): status 1, one line, and the link is still there.
ln -s /dev/full out/full.bmp
"$render_world" out/full.bmp < world.txt 2> err.txt
status=$?
check "a full device gives status 1 (got $status)" test "$status" -eq 1
check "with one line on stderr" test "$(wc -l < err.txt)" -eq 1
check "that says why" grep -q "^render_world: writing 'out/full.bmp' failed: No space left on device" err.txt
check "and removes nothing" test -L out/full.bmp
cat err.txt >&2

# A FIFO is written to as a stream, and stays a FIFO.
mkfifo out/picture.fifo
cat out/picture.fifo > from_fifo.bmp &
reader=$!
check "render into a FIFO" "$render_world" out/picture.fifo < world.txt
wait "$reader"
check "the FIFO's reader got the picture" cmp from_fifo.bmp expected.bmp
check "the FIFO is still a FIFO" test -p out/picture.fifo

# Standard output that cannot be written is an error too.
"$render_world" < world.txt > /dev/full 2> err.txt
status=$?
check "a full standard output gives status 1 (got $status)" test "$status" -eq 1
check "and says why" grep -q "^render_world: writing standard output failed: No space left on device" err.txt

check "nothing but the expected files in the folder (got: $(entries))" \
    test "$(entries)" = "full.bmp link.bmp old.bmp picture.fifo "
exit $failed
