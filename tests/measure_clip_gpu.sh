#!/bin/bash
# Runs tests/measure_clip_gpu.py on a bare GPU machine without internet, from the
# repository root:  bash tests/measure_clip_gpu.sh OUTDIR [BUDGET_S] [measure_clip_gpu.py args]
#
# What it needs besides the checkout, in ignored folders that travel with it:
#   .whl/        cp312 manylinux wheels of what the machine lacks (2026-11: cairosvg,
#                cairocffi, cffi, pycparser, cssselect2, tinycss2, webencodings, defusedxml,
#                resvg, open_clip_torch, ftfy, wcwidth), fetched here with
#                `pip download --no-deps --only-binary=:all: --python-version 3.12 ...`
#   .gpu/debs/   libcairo2 and its libraries as Debian packages (`apt-get download
#                libcairo2 libfontconfig1 fontconfig-config fonts-dejavu-core libfreetype6
#                libpixman-1-0 libpng16-16 libx11-6 libx11-data libxau6 libxcb-render0
#                libxcb-shm0 libxcb1 libxdmcp6 libxext6 libxrender1 libbrotli1 libbsd0 libmd0
#                libexpat1 zlib1g`), unpacked to /tmp/cairo (never to /) only when the
#                machine has no libcairo.so.2
#   .gpu/corpus/ the corpus files to score (the shared corpus is beside the repository,
#                so it does not travel); else --corpus
#   SRC          the source roots to import (default: the checkout's own)
OUTD=${1:?usage: measure_clip_gpu.sh OUTDIR [BUDGET_S] [args]}; shift
BUDGET=240
if [[ ${1:-} =~ ^[0-9]+$ ]]; then BUDGET=$1; shift; fi
export PYTHONUNBUFFERED=1
REPO=$PWD
SRC=${SRC:-$REPO}
echo "== start $(date -u +%FT%TZ)"
nvidia-smi -L 2>&1 | head -3
if [ -d .whl ] && ! python3 -c "import cairosvg, open_clip, resvg" 2>/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 3
  export PYTHONPATH=/tmp/site
fi
if ! ldconfig -p | grep -q 'libcairo\.so\.2'; then
  echo "== no system libcairo: using the carried .debs, unpacked in /tmp/cairo"
  mkdir -p /tmp/cairo/fccache
  for f in .gpu/debs/*.deb; do dpkg -x "$f" /tmp/cairo || exit 4; done
  export LD_LIBRARY_PATH=/tmp/cairo/usr/lib/x86_64-linux-gnu:/tmp/cairo/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  printf '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig><dir>/tmp/cairo/usr/share/fonts</dir><dir>/usr/share/fonts</dir><cachedir>/tmp/cairo/fccache</cachedir></fontconfig>\n' > /tmp/cairo/fonts.conf
  export FONTCONFIG_FILE=/tmp/cairo/fonts.conf
fi
export PYTHONPATH=$SRC/engine:$SRC/plugins:$SRC/validation:$SRC/svgloo:$SRC/structure${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import cairocffi, cairosvg, resvg, open_clip; print('cairo', cairocffi.cairo_version_string(), 'cairosvg', cairosvg.__version__, 'open_clip', open_clip.__version__)" || exit 5
CORPUS=()
[ -d .gpu/corpus ] && CORPUS=(--corpus .gpu/corpus)
python3 "$SRC/tests/measure_clip_gpu.py" --out "$OUTD" --repo "$SRC" "${CORPUS[@]}" --budget "$BUDGET" "$@"
