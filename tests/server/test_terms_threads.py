"""The stemmer loads once however many threads stem their first word together.

The HTTP server's worker threads share one process: the first words they index or search may arrive
at the same instant, and the stemmer's lean load puts a stand-in `snowballstemmer` package in
`sys.modules` for a moment. A thread that saw the stand-in used to fail with "module 'snowballstemmer'
has no attribute 'stemmer'" (an `internal` error on a write). Each round starts from a process with
no stemmer loaded, so it runs in a child process of its own.
"""

import subprocess
import sys

ROUNDS = """
import sys, threading
from memverbs.server import terms

failures = []
for _ in range(60):
    for name in [m for m in sys.modules if m.split('.')[0] in ('snowballstemmer', '_memverbs_snowball')]:
        del sys.modules[name]
    terms._stemmer.cache_clear()
    terms._stem.cache_clear()
    start = threading.Barrier(8)

    def first_word() -> None:
        start.wait()
        try:
            assert terms.stem('turtles') == 'turtl'
            import snowballstemmer
            assert snowballstemmer.stemmer('english').stemWord('running') == 'run'
        except BaseException as error:
            failures.append(repr(error))

    threads = [threading.Thread(target=first_word) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
print(len(failures), failures[:3])
"""


def test_threads_stemming_their_first_word_together_all_get_the_stemmer() -> None:
    done = subprocess.run([sys.executable, "-c", ROUNDS], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.startswith("0 "), done.stdout
