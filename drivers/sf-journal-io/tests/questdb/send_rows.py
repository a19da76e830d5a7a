"""Sends rows through the questdb client with a store-and-forward directory.

Run by the interop tests of this crate:
`send_rows.py PORT SF_DIR SENDER_ID ROWS [PAUSE_SECONDS [EXTRA_CONF [LINGER_SECONDS]]]`.
Each row is published as its own frame (one flush per row) and then reported on
standard output as `flushed <index> <symbol>`, so the caller knows which rows the
client had appended to its journal. Every row carries a symbol column whose value
changes every third row, so the slot's symbol dictionary keeps growing. When all
rows are out the script says `done` and closes the sender.
"""

import sys
import time
import warnings

warnings.simplefilter("ignore")

from questdb.ingress import Sender, TimestampNanos  # noqa: E402


def main():
    port, sf_dir, sender_id, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    pause = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    extra = sys.argv[6] if len(sys.argv) > 6 else ""
    linger = float(sys.argv[7]) if len(sys.argv) > 7 else 0.0
    conf = f"ws::addr=127.0.0.1:{port};sf_dir={sf_dir};sender_id={sender_id};{extra}"
    with Sender.from_conf(conf) as sender:
        for i in range(rows):
            symbol = f"k{i // 3}"
            sender.row(
                "trades",
                symbols={"sym": symbol},
                columns={"n": i, "px": i / 4},
                at=TimestampNanos(1_700_000_000_000_000_000 + i),
            )
            sender.flush()
            print(f"flushed {i} {symbol}", flush=True)
            if pause:
                time.sleep(pause)
        if linger:
            time.sleep(linger)
        print("done", flush=True)


if __name__ == "__main__":
    main()
