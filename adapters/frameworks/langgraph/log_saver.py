"""A LangGraph checkpointer (`BaseCheckpointSaver`) whose storage is the harness's
durable log: every checkpoint LangGraph puts and every pending write it records goes
out as one `persist` record before the call returns, and a restore replays those
records into the same tables.

Guarantee: what a restarted application reads back through this saver is exactly
what LangGraph had put through it before the crash, no more (a record the harness did
not make durable is not replayed; a torn last record is cut by the engine) and no
less. Like LangGraph's own database savers, a checkpoint stores the values of the
channels whose version moved (`new_versions`) and refers to older values by version,
so the log grows with what changes, not with the whole state at every step. Values are
serialized with the saver's `serde` (LangGraph's JsonPlusSerializer) and carried as
base64 inside one JSON line per record. The saver keeps one extra thing for the
harness's eyes only: the live objects it was handed (`live`), so the history the
engine reports (`messages`, the thread's state as `aget_state` shows it: the last
checkpoint with its pending writes applied) keeps object identity while unchanged.
This file is adapter (the storage backend a LangGraph user writes for their database).
"""

from __future__ import annotations

import base64

from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)


def _enc(typed):
    kind, data = typed
    return [kind, base64.b64encode(data).decode("ascii")]


def _dec(pair):
    return pair[0], base64.b64decode(pair[1])


def _merged(messages, written):
    """`add_messages` without its side effect (it gives id-less messages an id in
    place): a written message replaces the one with its id, else it is appended."""
    out = list(messages)
    for m in written if isinstance(written, list) else [written]:
        at = next((i for i, o in enumerate(out) if m.id is not None and o.id == m.id), None)
        if at is None:
            out.append(m)
        else:
            out[at] = m
    return out


class LogSaver(BaseCheckpointSaver):
    """`persist(record)` appends one record (a JSON-able dict) to the durable log."""

    def __init__(self, persist):
        super().__init__()
        self.persist = persist
        self.checkpoints = {}  # (thread, ns) -> {checkpoint_id: (checkpoint, metadata, parent_id)}, put order
        self.blobs = {}  # (thread, ns, channel, version) -> typed value
        self.writes = {}  # (thread, ns, checkpoint_id) -> {(task_id, idx): (task_id, channel, typed, task_path)}
        self.live = {}  # (thread, ns, checkpoint_id[, task_id, idx]) -> a live `messages` value put here
        self.view = (None, None)  # (what the last `messages` answer was built from, the answer)

    # --- the records ---------------------------------------------------------------

    def apply(self, kind, r):
        """Replays one record of the saver's kinds into the tables (restore and live)."""
        if kind == "put":
            key = (r["thread"], r["ns"])
            for channel, (version, typed) in r["values"].items():
                self.blobs[(r["thread"], r["ns"], channel, version)] = _dec(typed)
            ckpt = self.serde.loads_typed(_dec(r["checkpoint"]))
            meta = self.serde.loads_typed(_dec(r["metadata"]))
            self.checkpoints.setdefault(key, {})[ckpt["id"]] = (ckpt, meta, r["parent"])
        elif kind == "writes":
            outer = self.writes.setdefault((r["thread"], r["ns"], r["checkpoint_id"]), {})
            for idx, channel, typed in r["writes"]:
                outer[(r["task_id"], idx)] = (r["task_id"], channel, _dec(typed), r["task_path"])
        else:
            raise KeyError(kind)

    # --- BaseCheckpointSaver ---------------------------------------------------------

    async def aput(self, config, checkpoint, metadata, new_versions):
        c = config["configurable"]
        thread, ns = c["thread_id"], c.get("checkpoint_ns", "")
        values = checkpoint["channel_values"]
        stored = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        stored["channel_values"] = {}
        record = {
            "thread": thread,
            "ns": ns,
            "parent": c.get("checkpoint_id"),
            "values": {
                ch: [ver, _enc(self.serde.dumps_typed(values[ch]) if ch in values else ("empty", b""))]
                for ch, ver in sorted(new_versions.items())
            },
            "checkpoint": _enc(self.serde.dumps_typed(stored)),
            "metadata": _enc(self.serde.dumps_typed(get_checkpoint_metadata(config, metadata))),
        }
        self.persist({"put": record})
        self.apply("put", record)
        if "messages" in values:
            self.live[(thread, ns, checkpoint["id"])] = values["messages"]
        return {"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": checkpoint["id"]}}

    async def aput_writes(self, config, writes, task_id, task_path=""):
        c = config["configurable"]
        outer = self.writes.get((c["thread_id"], c.get("checkpoint_ns", ""), c["checkpoint_id"]), {})
        fresh = []
        for i, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, i)
            if idx >= 0 and (task_id, idx) in outer:
                continue  # a task's regular writes are stored once (a retry repeats them)
            fresh.append([idx, channel, _enc(self.serde.dumps_typed(value))])
            if channel == "messages":
                self.live[(c["thread_id"], c.get("checkpoint_ns", ""), c["checkpoint_id"], task_id, idx)] = value
        if not fresh:
            return
        record = {
            "thread": c["thread_id"],
            "ns": c.get("checkpoint_ns", ""),
            "checkpoint_id": c["checkpoint_id"],
            "task_id": task_id,
            "task_path": task_path,
            "writes": fresh,
        }
        self.persist({"writes": record})
        self.apply("writes", record)

    def _tuple(self, thread, ns, cid):
        ckpt, meta, parent = self.checkpoints[(thread, ns)][cid]
        values = {}
        for ch, ver in ckpt["channel_versions"].items():
            typed = self.blobs.get((thread, ns, ch, ver))
            if typed is not None and typed[0] != "empty":
                values[ch] = self.serde.loads_typed(typed)
        checkpoint = {**ckpt, "channel_values": values}
        writes = sorted(self.writes.get((thread, ns, cid), {}).items(), key=lambda kv: writes_sort_key(kv[1][3], kv[0][0], kv[0][1]))
        return CheckpointTuple(
            config={"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": cid}},
            checkpoint=checkpoint,
            metadata=meta,
            parent_config={"configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": parent}} if parent else None,
            pending_writes=[(tid, ch, self.serde.loads_typed(typed)) for (_, (tid, ch, typed, _p)) in writes],
        )

    async def aget_tuple(self, config):
        c = config["configurable"]
        thread, ns = c["thread_id"], c.get("checkpoint_ns", "")
        saved = self.checkpoints.get((thread, ns))
        if not saved:
            return None
        cid = get_checkpoint_id(config)
        if cid is None:
            cid = max(saved)  # checkpoint ids sort by creation, as uuid6 ids do
        elif cid not in saved:
            return None
        return self._tuple(thread, ns, cid)

    async def alist(self, config, *, filter=None, before=None, limit=None):
        keys = sorted(self.checkpoints)
        if config is not None:
            c = config["configurable"]
            keys = [k for k in keys if k[0] == c["thread_id"] and ("checkpoint_ns" not in c or k[1] == c["checkpoint_ns"])]
        bound = get_checkpoint_id(before) if before else None
        for thread, ns in keys:
            for cid in sorted(self.checkpoints[(thread, ns)], reverse=True):
                if bound is not None and cid >= bound:
                    continue
                t = self._tuple(thread, ns, cid)
                if filter and any(t.metadata.get(k) != v for k, v in filter.items()):
                    continue
                if limit is not None:
                    if limit <= 0:
                        return
                    limit -= 1
                yield t

    def messages(self, thread):
        """The thread's `messages` as `aget_state` shows them: the last checkpoint's,
        with the pending writes stored against it applied by the channel's reducer;
        built from the live objects where this saver was handed them."""
        saved = self.checkpoints.get((thread, ""))
        if not saved:
            return []
        cid = max(saved)
        writes = sorted(self.writes.get((thread, "", cid), {}).items(), key=lambda kv: writes_sort_key(kv[1][3], kv[0][0], kv[0][1]))
        writes = [(k, w) for k, w in writes if w[1] == "messages"]
        basis = (cid, tuple(k for k, _ in writes))
        if self.view[0] == basis:
            return self.view[1]
        base = self.live.get((thread, "", cid))
        if base is None:
            base = self._tuple(thread, "", cid).checkpoint["channel_values"].get("messages", [])
            self.live[(thread, "", cid)] = base
        out = base
        for (task_id, idx), (_, _, typed, _) in writes:
            key = (thread, "", cid, task_id, idx)
            if key not in self.live:
                self.live[key] = self.serde.loads_typed(typed)
            out = _merged(out, self.live[key])
        self.view = (basis, out)
        return out
