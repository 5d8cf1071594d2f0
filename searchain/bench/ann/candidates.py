"""ANN libraries side by side on the same clustered vectors (how the compact index was chosen).

``python -m searchain.bench.ann.candidates N [names] [work dir]``, names from ivfpq48, ivfpq96fs,
hnswsq8, us_i8, us_b1, hnswlib (usearch: ``pip install usearch``, not a dependency). Prints one
JSON line per candidate: build time, bytes per vector, and for each search setting the recall@10
and top-1 agreement against exact float32 after rescoring the candidate list exactly from a
memory-mapped float32 file, with p50/p99 latency on one thread. Results: docs/retrieval.md.
"""
import json, sys, time, statistics, os, gc
import numpy as np
from searchain.bench.ann.hnsw_bench import clustered_vectors, exact_top_k

D, NQ, K = 384, 500, 10
N = which = work = data = queries = truth = None


def _setup(argv):
    global N, which, work, data, queries, truth
    N = int(argv[1]) if len(argv) > 1 else 500_000
    which = argv[2].split(",") if len(argv) > 2 else ["ivfpq48", "ivfpq96fs", "hnswsq8", "us_i8", "us_b1", "hnswlib"]
    work = argv[3] if len(argv) > 3 else "ann-candidates"
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(0)
    fvec = f"{work}/data{N}.f32"
    if not os.path.exists(fvec):
        data, centres = clustered_vectors(N, D, rng)
        data.tofile(fvec)
        np.save(f"{work}/centres.npy", centres)
        del data
    centres = np.load(f"{work}/centres.npy")
    queries, _ = clustered_vectors(NQ, D, np.random.default_rng(1), centres=centres)
    data = np.memmap(fvec, dtype=np.float32, mode="r", shape=(N, D))
    tf = f"{work}/truth{N}.npy"
    if os.path.exists(tf):
        truth = np.load(tf)
    else:
        truth = exact_top_k(np.asarray(data), queries, K); np.save(tf, truth)




def rss():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) * 1024


def rescore(cands, q, k=K):
    cands = cands[cands >= 0]
    cands = np.unique(cands)
    vecs = data[cands]
    s = vecs @ q
    o = np.argsort(-s)[:k]
    return cands[o]


def evaluate(search, depths):
    out = {}
    for depth in depths:
        lat, found = [], []
        for q in queries:
            t = time.perf_counter()
            c = search(q, depth)
            f = rescore(c, q)
            lat.append((time.perf_counter() - t) * 1000)
            found.append(np.pad(f, (0, K - len(f)), constant_values=-1))
        found = np.array(found)
        rec = np.mean([len(set(a) & set(b)) / K for a, b in zip(found, truth)])
        top1 = np.mean(found[:, 0] == truth[:, 0])
        out[str(depth)] = {"recall10": round(float(rec), 4), "top1": round(float(top1), 4),
                           "p50_ms": round(statistics.median(lat), 3),
                           "p99_ms": round(sorted(lat)[int(0.99 * len(lat))], 3)}
    return out


def run_faiss(name):
    import faiss
    faiss.omp_set_num_threads(2)
    nlist = 2048 if N >= 300_000 else 256  # the recorded 200k run used 256
    spec = {"ivfpq48": f"IVF{nlist},PQ48", "ivfpq96fs": f"IVF{nlist},PQ96x4fs",
            "ivfpq64": f"IVF{nlist},PQ64", "hnswsq8": "HNSW32,SQ8", "ivfsq8": f"IVF{nlist},SQ8"}[name]
    r0 = rss()
    t = time.perf_counter()
    idx = faiss.index_factory(D, spec, faiss.METRIC_INNER_PRODUCT)
    sample = np.asarray(data[np.random.default_rng(2).choice(N, min(N, 100_000), replace=False)])
    idx.train(sample)
    for s in range(0, N, 100_000):
        idx.add(np.ascontiguousarray(data[s:s + 100_000]))
    build = time.perf_counter() - t
    path = f"{work}/{name}.faiss"
    faiss.write_index(idx, path)
    size = os.path.getsize(path)
    faiss.omp_set_num_threads(1)
    res = {"index": spec, "build_s": round(build, 1), "file_bytes_per_vec": round(size / N, 1),
           "rss_delta_per_vec": round((rss() - r0) / N, 1)}
    sweeps = {}
    if name.startswith("ivf"):
        for nprobe in (16, 32, 64):
            faiss.extract_index_ivf(idx).nprobe = nprobe
            sweeps[f"nprobe{nprobe}"] = evaluate(lambda q, d: idx.search(q[None], d)[1][0], (50, 100, 200))
    else:
        for ef in (64, 128):
            idx.hnsw.efSearch = ef
            sweeps[f"ef{ef}"] = evaluate(lambda q, d: idx.search(q[None], d)[1][0], (50, 100, 200))
    res["sweeps"] = sweeps
    return res


def run_usearch(name):
    from usearch.index import Index
    dtype = {"us_i8": "i8", "us_b1": "b1", "us_f16": "f16"}[name]
    r0 = rss()
    t = time.perf_counter()
    idx = Index(ndim=D, metric="cos" if dtype != "b1" else "hamming", dtype=dtype, connectivity=16,
                expansion_add=128, expansion_search=64)
    for s in range(0, N, 100_000):
        block = np.ascontiguousarray(data[s:s + 100_000])
        keys = np.arange(s, s + len(block))
        if dtype == "b1":
            block = np.packbits(block > 0, axis=1)
        idx.add(keys, block, threads=2)
    build = time.perf_counter() - t
    path = f"{work}/{name}.usearch"
    idx.save(path)
    size = os.path.getsize(path)
    res = {"index": f"usearch HNSW {dtype} M16", "build_s": round(build, 1), "file_bytes_per_vec": round(size / N, 1),
           "rss_delta_per_vec": round((rss() - r0) / N, 1)}
    sweeps = {}
    for ef in (64, 128, 256):
        idx.expansion_search = ef
        def s(q, d):
            qq = np.packbits(q > 0)[None] if dtype == "b1" else q[None]
            return idx.search(qq, d, threads=1).keys.astype(np.int64).ravel()
        sweeps[f"ef{ef}"] = evaluate(s, (50, 100, 200) if dtype != "b1" else (100, 200, 400))
    res["sweeps"] = sweeps
    return res


def run_hnswlib(name):
    import hnswlib
    r0 = rss()
    t = time.perf_counter()
    idx = hnswlib.Index(space="ip", dim=D)
    idx.init_index(max_elements=N, M=32, ef_construction=200, random_seed=100)
    for s in range(0, N, 100_000):
        idx.add_items(np.ascontiguousarray(data[s:s + 100_000]), np.arange(s, min(N, s + 100_000)), num_threads=2)
    build = time.perf_counter() - t
    res = {"index": "hnswlib float32 M32 efC200 (today)", "build_s": round(build, 1),
           "rss_delta_per_vec": round((rss() - r0) / N, 1)}
    idx.set_num_threads(1)
    sweeps = {}
    for ef in (128,):
        idx.set_ef(ef)
        sweeps[f"ef{ef}"] = evaluate(lambda q, d: idx.knn_query(q[None], k=d, num_threads=1)[0][0].astype(np.int64), (10, 50))
    res["sweeps"] = sweeps
    return res


def main(argv=None):
    _setup(argv if argv is not None else sys.argv)
    results = {}
    for name in which:
        gc.collect()
        fn = run_hnswlib if name == "hnswlib" else run_usearch if name.startswith("us_") else run_faiss
        results[name] = fn(name)
        print(json.dumps({name: results[name]}), flush=True)



if __name__ == "__main__":
    main()
