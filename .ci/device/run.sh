#!/bin/bash
# The checks that need the lent machine (docs: BENCHMARKS.md "On a GPU" and "Ingest on 16 vCPUs"),
# after .ci/device/prepare.sh filled .dev/. On the device tool:
#   run(command="bash .dev/run.sh cores", carry=[".dev"], timeout_s=...)   # #33: ingest scaling
#   run(command="bash .dev/run.sh gpu", carry=[".dev"], timeout_s=...)     # #37: CUDA build + GPU
# Each part takes 4-6 minutes (the CUDA build alone ~5): at 15 minutes of device time a session,
# run one part per call. The machine returns at most 8 files: every result goes into ONE tar,
# rewritten after each step, so a step cut off by the time limit loses only itself.
set -u
PART=${1:-cores}
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
R=$PWD; D=$R/.dev; PY=python3; W=/tmp/results; mkdir -p $W
T0=$(date +%s)
step() { echo "[$(( $(date +%s) - T0 ))s] $*" >> $W/steps.txt; tar cf $OUT/results.tar -C $W .; }
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site $D/whl/*.whl || { step pip-failed; exit 1; }
export PYTHONPATH=/tmp/site:$R
{ nproc; lscpu | grep -E "Model name|Thread"; free -g | head -2; nvidia-smi -L; $PY --version; } > $W/machine.txt 2>&1
step "installed ($PART)"
B="$PY -m searchain bench ingest --repeats 1 --json"
if [ "$PART" = cores ]; then
  $PY - > $W/data.txt 2>&1 <<'PYEOF'
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
import pyarrow as pa, pyarrow.parquet as pq
from searchain.bench.ingest.articles import make_parquet
from searchain.bench.ingest.multistream import repeat_pages, to_multistream
t = time.time()
with ProcessPoolExecutor(16) as pool:  # 16 seeds, then one file with unique ids
    shards = list(pool.map(make_parquet, [Path(f"/tmp/shard{i}.parquet") for i in range(16)], [3125] * 16, range(16)))
table = pa.concat_tables([pq.read_table(s) for s in shards])
table = table.set_column(0, "id", pa.array([str(10_000 + i) for i in range(table.num_rows)]))
pq.write_table(table, "/tmp/art50k.parquet", row_group_size=500)
print("parquet", table.num_rows, round(time.time() - t, 1))
for copies, name in ((8, "small"), (48, "big")):  # 20 pages a stream: enough work items for 16
    Path(f"/tmp/{name}").mkdir()
    repeat_pages(Path(".dev/enwiki-gensim.xml.bz2"), Path(f"/tmp/{name}.xml"), copies)
    print(to_multistream(Path(f"/tmp/{name}.xml"), Path(f"/tmp/{name}/enwiki-x{copies}-multistream.xml.bz2"), 20, processes=16))
PYEOF
  step data
  timeout 60 $B --source /tmp/small/enwiki-x8-multistream.xml.bz2 --workers 1 --no-wikiextractor > $W/dump_1.json 2>> $W/errors.txt; step "dump x8, 1 worker rc=$?"
  timeout 120 $B --source /tmp/art50k.parquet --workers 1,4,16 > $W/parquet.json 2>> $W/errors.txt; step "parquet rc=$?"
  timeout 100 $B --source /tmp/big/enwiki-x48-multistream.xml.bz2 --workers 8 --writer-watch both --no-wikiextractor > $W/dump_watch.json 2>> $W/errors.txt; step "dump x48, 8 workers, watch off/on rc=$?"
  timeout 100 $B --source /tmp/big/enwiki-x48-multistream.xml.bz2 --workers 16 --wikiextractor-workers 16 > $W/dump_big.json 2>> $W/errors.txt; step "dump x48, 16 workers rc=$?"
  # the tantivy keyword index with 1..16 indexing threads (80k generated passages; session 32)
  timeout 90 $PY -m searchain bench keyword-build --articles 20000 --threads 1,2,4,8,16 > $W/keyword_build.json 2>> $W/errors.txt; step "keyword-build rc=$?"
  # a large ingest to keyword search, FTS5 left to tantivy against built at its end (session 33)
  timeout 90 $PY -m searchain bench keyword-left --source /tmp/big/enwiki-x48-multistream.xml.bz2 --workers 16 > $W/keyword_left.json 2>> $W/errors.txt; step "keyword-left rc=$?"
fi
if [ "$PART" = gpu ]; then
  tar xJf $D/llama_trim.tar.xz -C /tmp
  export PATH=$PATH:/usr/local/cuda/bin
  ( CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 -DGGML_CUDA_NCCL=OFF -DLLAVA_BUILD=OFF -DCMAKE_SHARED_LINKER_FLAGS=-Wl,--exclude-libs,ALL" \
    CMAKE_BUILD_PARALLEL_LEVEL=16 timeout 400 $PY -m pip install --no-build-isolation --no-deps --no-index --no-compile \
    --target /tmp/llama /tmp/llama_cpp_python-0.3.36 > /tmp/build.log 2>&1; echo "build rc=$?" >> /tmp/build.log ) &
  BUILD=$!
  $PY -c "
from pathlib import Path
from searchain.llm.fakes.testmodel import LAYOUTS, _write_unquantised
from searchain.llm.chat_templates import CHATML_TEMPLATE
for name in ('qwen2.5-1.5b', 'qwen2.5-0.5b'):  # written while llama.cpp builds; quantised after
    _write_unquantised(Path(f'/tmp/{name}.f16.gguf'), LAYOUTS[name], name, 0, CHATML_TEMPLATE)
" >> $W/errors.txt 2>&1
  wait $BUILD; tail -c 2000 /tmp/build.log > $W/build_tail.txt; step built
  export PYTHONPATH=/tmp/llama:/tmp/site:$R
  $PY -c "
from pathlib import Path
from searchain.llm.fakes.testmodel import quantize_gguf, quant_file_type
for name in ('qwen2.5-1.5b', 'qwen2.5-0.5b'):
    quantize_gguf(Path(f'/tmp/{name}.f16.gguf'), Path(f'/tmp/{name}.gguf'), quant_file_type('Q4_K_M'), n_threads=16)
" > /tmp/quant.log 2>&1; step "quantised rc=$?"
  M=/tmp/qwen2.5-1.5b.gguf; S="$PY -m searchain bench"
  timeout 60 $S lookup --model $M --dataset $D/hotpot4.jsonl --limit 3 --drafts 0,2,4 --draft-model /tmp/qwen2.5-0.5b.gguf > $W/lookup_gpu.json 2>> $W/errors.txt; step "lookup rc=$?"
  timeout 30 $S batch --model /tmp/qwen2.5-0.5b.gguf --sizes 1,3,5,9 --repeats 8 > $W/batch_gpu_05.json 2>> $W/errors.txt; step "batch 0.5B rc=$?"
  timeout 60 $S batch --model $M --gpu-layers 0 --threads 16 --sizes 1,2,3,5,9,17 --repeats 4 > $W/batch_cpu16.json 2>> $W/errors.txt; step "batch CPU 16 threads rc=$?"
  timeout 30 $S batch --model $M --sizes 1,2,3,5,9,17,33 --repeats 8 > $W/batch_gpu.json 2>> $W/errors.txt; step "batch GPU rc=$?"
fi
step done
