#!/bin/bash
# Fill .dev/ (ignored by git, carried to the lent GPU machine with carry=[".dev"]) with what
# run.sh needs there, where nothing can be downloaded: wheels for its Python 3.12, a trimmed
# llama-cpp-python source (the build there takes ~5 min on 16 vCPUs), the real dump excerpt the
# ingest figures use, and a few HotpotQA questions. Run from the repository root, with network.
set -eu
V=0.3.36
mkdir -p .dev/whl .dev/tmp && grep -qx "/.dev/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo "/.dev/" >> .git/info/exclude; }
for pk in sqlite-utils==4.2.1 sqlite-fts4==1.0.3 click-default-group==1.2.4 platformdirs==4.14.8 \
          pypdfium2==5.15.2 wikiextractor==3.1.0 gguf==0.19.0 diskcache==5.6.3; do
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .dev/whl "$pk"
done
# llama-cpp-python's sdist is 77 MB (the tree travels only up to 64 MiB): drop the vocab files,
# docs, tests, other backends and the submodule's git pack; 5 MB as .tar.xz.
python3 -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$V" -d .dev/tmp
tar xzf .dev/tmp/llama_cpp_python-$V.tar.gz -C .dev/tmp
S=.dev/tmp/llama_cpp_python-$V
rm -rf $S/.git $S/docs $S/docker $S/examples $S/tests $S/vendor/llama.cpp/{models,docs,media,benches,.github,tools/ui}
for d in virtgpu cann openvino webgpu et metal hexagon sycl vulkan opencl; do rm -rf $S/vendor/llama.cpp/ggml/src/ggml-$d; done
tar cJf .dev/llama_trim.tar.xz -C .dev/tmp llama_cpp_python-$V
# 206 real English dump pages (gensim's test data, LGPL wheel on PyPI; not committed)
python3 -m pip download -q --no-deps --only-binary=:all: gensim==4.3.3 -d .dev/tmp
unzip -o -q -j .dev/tmp/gensim-4.3.3-*.whl "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2" -d .dev/tmp
mv .dev/tmp/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2 .dev/enwiki-gensim.xml.bz2
head -4 ../shared/eval/hotpotqa/dev_500.jsonl > .dev/hotpot4.jsonl
cp .ci/device/run.sh .dev/run.sh
rm -rf .dev/tmp
du -sh .dev
