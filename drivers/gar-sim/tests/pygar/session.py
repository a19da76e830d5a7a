"""A scripted session of the reference Python GAR client against the gar-sim loopback server.

Usage: session.py URL MODE

MODE `session` runs the whole scripted session; every other mode is one way for a session to
end (stop, server_logoff, disconnect, heartbeat_timeout, error, undecodable, connect_failed,
unauthorized, version_refused, upstream_lost, first_beat_grace, server_heartbeat_timeout). The script prints one JSON object per line: `{"step": ..., ...}`. Lines
`READY` tell the driving test that the client is connected, introduced and has seen a server
heartbeat, so a fault may be injected now. Every wait is bounded.
"""

import json
import sys
import threading
import time

from gar import GARClient

WAIT = 5.0


def emit(step, **fields):
    fields["step"] = step
    print(json.dumps(fields, default=str, sort_keys=True), flush=True)


def wait_for(pred, what, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    emit("timeout", what=what)
    return False


class Watch:
    """Collects what one client reports."""

    def __init__(self, client):
        self.c = client
        self.statuses = []
        self.errors = []
        self.write_errors = []
        self.echoes = []
        self.compares = []
        self.records = []
        self.batches = []
        self.topics = {}
        self.keys = {}
        self.deleted = []
        self.intro = None
        self.beats = 0
        self.stopped = threading.Event()
        self.stop_reasons = []
        client.register_introduction_handler(self.on_intro)
        client.register_heartbeat_handler(self.on_beat)
        client.register_subscription_status_handler(self.on_status)
        client.register_handler("Error", self.on_error)
        client.register_write_errors_handler(self.on_write_errors)
        client.register_echo_response_handler(self.echoes.append)
        client.register_compare_exchange_result_handler(self.on_compare)
        client.register_record_update_handler(self.on_record)
        client.register_batch_update_handler(self.on_batch)
        client.register_topic_introduction_handler(self.on_topic)
        client.register_key_update_handler(self.on_key)
        client.register_stopped_handler(self.on_stopped)

    def on_intro(self, version, interval, user, schema=None):
        self.intro = {"version": version, "interval": interval, "user": user}

    def on_beat(self, *args):
        self.beats += 1

    def on_status(self, name, status):
        self.statuses.append((name, status))
        if status == "NeedsContinue":
            self.c.send_subscribe_continue(name)

    def on_error(self, msg):
        value = msg.get("value", msg)
        self.errors.append(
            {
                "message": value.get("message"),
                "recoverable": value.get("recoverable"),
                "failed": len(value.get("failed_writes") or []),
            }
        )

    def on_write_errors(self, failed, message, msg_ref):
        for f in failed:
            self.write_errors.append(
                {
                    "reason": f.get("reason"),
                    "malformed": f.get("malformed"),
                    "key_name": f.get("key_name"),
                    "topic_name": f.get("topic_name"),
                    "msg_ref": msg_ref,
                }
            )

    def on_compare(self, msg):
        self.compares.append(msg.get("value", msg))

    def on_record(self, key_id, topic_id, value):
        self.records.append(
            (self.keys.get(key_id, key_id), self.topics.get(topic_id, topic_id), value)
        )

    def on_batch(self, batch, group):
        self.batches.append(batch)
        for k in batch.get("keys", []):
            if "name" in k:
                self.keys[k["key_id"]] = k["name"]

    def on_topic(self, topic_id, name):
        self.topics[topic_id] = name

    def on_key(self, key_id, name, *rest):
        if name:
            self.keys[key_id] = name
        if len(rest) >= 2 and rest[1]:
            self.deleted.append((self.keys.get(key_id, name), rest[1], rest[0]))

    def on_stopped(self):
        self.stop_reasons.append(self.c.stop_reason)
        self.stopped.set()

    def snapshot(self, first):
        """The records of the batches from index `first` on, by key and topic name."""
        out = {}
        for b in self.batches[first:]:
            for k in b.get("keys", []):
                name = self.keys.get(k["key_id"], k["key_id"])
                for tid, v in (k.get("topics") or {}).items():
                    out.setdefault(name, {})[self.topics.get(int(tid), tid)] = v
        return out

    def echo(self, msg_ref):
        self.c.send_echo_request(msg_ref)
        return wait_for(lambda: msg_ref in self.echoes, "echo %d" % msg_ref)

    def statuses_of(self, name):
        return [s for n, s in self.statuses if n == name]


def started(url, **kw):
    c = GARClient(url, heartbeat_timeout_interval=kw.pop("interval", 4000), **kw)
    w = Watch(c)
    t = c.start_in_thread()
    return c, w, t


def finish(c, w, t, label):
    t.join(3 * WAIT)
    emit(
        "stopped",
        label=label,
        reason=c.stop_reason,
        exit_code=c.exit_code,
        server_logoff=c.server_logoff,
        callbacks=len(w.stop_reasons),
        errors=w.errors,
        alive=t.is_alive(),
    )


def session(url):
    c, w, t = started(url, application="pygar-session")
    if not wait_for(lambda: w.intro is not None, "introduction"):
        return
    emit("introduction", **w.intro)

    # Publish by name, then the echo barrier: every write before it has landed.
    c.publish_record("AAPL", "bid", 1.5, class_name="Underlier")
    c.publish_record("AAPL", "name", "Apple", class_name="Underlier")
    c.publish_record("ABC", "bid", 7, class_name="Underlier")
    c.publish_record("MSFT", "bid", 2, class_name="Underlier")
    emit("echo", ok=w.echo(1))

    # A snapshot with a key filter.
    first = len(w.batches)
    c.subscribe_options(
        name="snap", subscription_mode="Snapshot", class_name="Underlier", key_filter="^A"
    )
    wait_for(lambda: "Finished" in w.statuses_of("snap"), "snap finished")
    emit("snapshot", statuses=w.statuses_of("snap"), records=w.snapshot(first))

    # A snapshot in parts: one key per part, continued on NeedsContinue.
    first = len(w.batches)
    c.subscribe_options(
        name="parts", subscription_mode="Snapshot", class_name="Underlier", snapshot_size_limit=1
    )
    wait_for(lambda: "Finished" in w.statuses_of("parts"), "parts finished")
    emit("parts", statuses=w.statuses_of("parts"), records=w.snapshot(first))

    # A refused subscription: an unknown class.
    c.subscribe_options(name="refused", subscription_mode="Snapshot", class_name="NoSuchClass")
    wait_for(lambda: "Finished" in w.statuses_of("refused"), "refused finished")
    emit("refused", statuses=w.statuses_of("refused"), errors=w.errors)

    # Streaming: the snapshot, then live updates.
    c.subscribe_options(name="live", subscription_mode="Streaming", class_name="Underlier")
    wait_for(lambda: "Streaming" in w.statuses_of("live"), "live streaming")
    seen = len(w.records)
    c.publish_record("AAPL", "ask", 2.5, class_name="Underlier")
    w.echo(2)
    wait_for(lambda: len(w.records) > seen, "live record")
    emit("streaming", statuses=w.statuses_of("live"), records=w.records[seen:])

    # Key teardown: one class of a key, then a whole key; the streaming subscription sees both.
    c.publish_record("ABC", "strike", 1, class_name="Option")
    w.echo(5)
    c.delete_class("ABC", "Option")
    c.delete_key("ABC")
    w.echo(6)
    wait_for(lambda: len(w.deleted) >= 2, "teardown seen")
    emit("teardown", deleted=w.deleted)

    # Compare-exchange and its null rules.
    def cx(key, topic, test, value):
        n = len(w.compares)
        c.compare_exchange_record(key, topic, test, value, class_name="Underlier")
        wait_for(lambda: len(w.compares) > n, "compare result")
        return w.compares[n] if len(w.compares) > n else None

    emit("cx_create_if_absent", result=cx("AAPL", "note", None, "x"))
    emit("cx_null_test_on_present", result=cx("AAPL", "note", None, "y"))
    emit("cx_mismatch", result=cx("AAPL", "note", "z", "y"))
    emit("cx_compare_and_delete", result=cx("AAPL", "note", "x", None))
    emit("cx_deleted_reads_null", result=cx("AAPL", "note", None, "w"))
    emit("cx_default_matches_missing", result=cx("AAPL", "lock", False, True))
    emit("cx_missing_is_not_zero", result=cx("MSFT", "ask", 0, 1))

    # Ownership: this client acquires MSFT; a second client's write is denied and reported.
    c.update_active_ownership(msg_ref=11, ownership_action="Acquire")
    c.publish_record("MSFT", "bid", 3, class_name="Underlier")
    w.echo(3)
    c2, w2, t2 = started(url, application="pygar-other")
    wait_for(lambda: w2.intro is not None, "second introduction")
    c2.update_active_ownership(msg_ref=12)
    c2.publish_record("MSFT", "bid", 4, class_name="Underlier")
    w2.echo(1)
    wait_for(lambda: w2.write_errors, "ownership write error")
    emit("ownership", write_errors=w2.write_errors, errors=w2.errors)
    n = len(w2.compares)
    c2.compare_exchange_record("MSFT", "bid", 3, 5, class_name="Underlier")
    wait_for(lambda: len(w2.compares) > n, "denied compare")
    emit("cx_write_denied", result=w2.compares[n] if len(w2.compares) > n else None)
    c2.logoff()
    t2.join(WAIT)

    # Failed writes of this client, reported because the marker's msg_ref is not 0.
    c.update_active_ownership(msg_ref=21)
    c.publish_record("AAPL", "nope", 1, class_name="Underlier")
    c.publish_record("AAPL", "bid", "not a number", class_name="Underlier")
    c.publish_record("AAPL", "strike", 9, class_name="Underlier")
    c.publish_record("AAPL", "status", "up", class_name="Underlier")
    w.echo(4)
    wait_for(lambda: len(w.write_errors) >= 4, "four write errors")
    emit("failed_writes", write_errors=w.write_errors, running=t.is_alive())

    # A bail-out-first writer: the first failed write ends its connection.
    c3, w3, t3 = started(url, application="pygar-bail", disconnect_on_write_failure=True)
    wait_for(lambda: w3.intro is not None, "bail introduction")
    c3.publish_record("AAPL", "nope", 1, class_name="Underlier")
    finish(c3, w3, t3, "disconnect_on_write_failure")

    # Logoff ends the session.
    c.logoff()
    finish(c, w, t, "logoff")


def ending(url, mode):
    kw = {"application": "pygar-" + mode}
    if mode in ("heartbeat_timeout", "first_beat_grace", "server_heartbeat_timeout"):
        kw["interval"] = 400
    if mode == "unauthorized":
        url = url + "?token=wrong"
    c, w, t = started(url, **kw)
    if mode in ("connect_failed", "unauthorized", "version_refused"):
        return finish(c, w, t, mode)
    if mode == "first_beat_grace":
        # The server never beats: the time from its introduction to the stop is the grace.
        wait_for(lambda: w.intro is not None, "introduction")
        since = time.monotonic()
        t.join(3 * WAIT)
        emit("grace", ms=int((time.monotonic() - since) * 1000), beats=w.beats)
        return finish(c, w, t, mode)
    if not wait_for(lambda: w.intro is not None and w.beats > 0, "introduction and a beat"):
        c.halt()
        return finish(c, w, t, mode)
    if mode == "upstream_lost":
        c.subscribe_options(name="live", subscription_mode="Streaming", class_name="Underlier")
        wait_for(lambda: "Streaming" in w.statuses_of("live"), "live streaming")
    print("READY", flush=True)
    if mode == "stop":
        c.stop()
    finish(c, w, t, mode)


def main():
    url, mode = sys.argv[1], sys.argv[2]
    if mode == "session":
        session(url)
    else:
        ending(url, mode)


if __name__ == "__main__":
    main()
