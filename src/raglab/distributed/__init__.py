"""RAG lab's heavy stages on a Dask cluster (the optional extra ``raglab[dask]``).

- :mod:`.cluster`: connect to a LocalCluster of N processes or to a scheduler's address;
  Dask is imported there, lazily, and nowhere else in RAG lab.
- :mod:`.shard`: one BM25 shard scored with the collection's global statistics (pure numpy).
- :mod:`.bm25`: the sharded index on the workers, with the reduction of the statistics and
  the merge of each shard's top k.
- :mod:`.chunking`: pages read and chunked on the workers (a folder split by files, a BEIR
  ``corpus.jsonl`` split by lines).
- :mod:`.evaluation`: questions spread over the workers, metrics gathered.
- :mod:`.pipeline`: a lab's BM25 rankings computed on the cluster.
- :mod:`.reading`: the reader's IDF document frequencies counted on the workers.
- :mod:`.importing`: ``raglab import beir`` with ``corpus.jsonl`` read and checked on the
  workers, by ranges of lines.
- :mod:`.lsa`: LSA with the TF-IDF term x window matrix in row blocks on the workers.
- :mod:`.lsa_held`: the fitted LSA model left on the workers, and LSA rankings per shard.

Every result equals the single-machine one bit for bit; docs/distributed.md says what runs
where. Importing this package imports no Dask module: the functions take a
``distributed.Client`` and call its methods.
"""
