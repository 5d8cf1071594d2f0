"""A ``wikimedia/wikipedia``-shaped parquet file (id, url, title, text) of generated articles
with English Wikipedia's article lengths, for timing the parquet ingest (``bench ingest
--source FILE.parquet``): no real shard can be fetched on the dev machines.

Lengths: prose words per article drawn log-normally with median 200 and mean ~315 (English
Wikipedia: ~21 M passages of ~100 words over ~6.7 M articles, a long tail of long articles).
Text: sentences of 8-25 words from a 30,000-word vocabulary with Zipf frequencies (so the FTS5
index sees a realistic spread of terms), paragraphs of 2-5 sentences, a section heading before
every 2-4 paragraphs after the lead, and the appendix headings (References, External links) at
the end, as the dataset has them. ``ROW_GROUP`` rows a row group.

    python -m searchain.bench.ingest.articles OUT.parquet --articles 4000
"""

from __future__ import annotations

import argparse
import math
import random
from itertools import accumulate
from pathlib import Path

ROW_GROUP = 500
VOCABULARY = 30_000
MEDIAN_WORDS, SIGMA = 200, 0.95
HEADINGS = ("History", "Geography", "Early life", "Career", "Description", "Reception", "Legacy",
            "Background", "Design", "Population", "Economy", "Culture", "Later years", "Works")


def make_parquet(path: Path, articles: int = 4000, seed: int = 0, row_group: int = ROW_GROUP) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(seed)
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    letter_weights = list(accumulate((26 - k) ** 2 for k in range(26)))
    words = ["".join(rng.choices(letters, cum_weights=letter_weights, k=max(2, min(12, int(rng.gauss(5, 2))))))
             for _ in range(VOCABULARY)]
    word_weights = list(accumulate(1 / (k + 1) ** 1.07 for k in range(VOCABULARY)))
    rows = {"id": [], "url": [], "title": [], "text": []}
    for n in range(articles):
        budget = max(20, int(math.exp(rng.gauss(math.log(MEDIAN_WORDS), SIGMA))))
        title = " ".join(w.capitalize() for w in rng.choices(words[:5000], k=rng.randint(1, 3)))
        parts, paragraphs, used = [], 0, 0
        while used < budget:
            if paragraphs and paragraphs % rng.randint(2, 4) == 0:
                parts.append(rng.choice(HEADINGS))
            sentences = []
            for _ in range(rng.randint(2, 5)):
                k = rng.randint(8, 25)
                sentence = rng.choices(words, cum_weights=word_weights, k=k)
                sentences.append(" ".join(sentence).capitalize() + ".")
                used += k
            parts.append(" ".join(sentences))
            paragraphs += 1
        parts += ["References", "Smith, J. (2001). A book. ISBN 978-0-00-000000-0.", "External links"]
        rows["id"].append(str(10_000 + n))
        rows["url"].append(f"https://en.wikipedia.org/wiki/{title.replace(' ', '_')}")
        rows["title"].append(title)
        rows["text"].append("\n\n".join(parts))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(rows), path, row_group_size=row_group)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--articles", type=int, default=4000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--row-group", type=int, default=ROW_GROUP)
    args = p.parse_args(argv)
    make_parquet(args.out, args.articles, args.seed, args.row_group)
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
