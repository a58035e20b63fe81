"""A `Session` (the SDK's conversation memory protocol) whose storage is the harness's
durable log.

Guarantee: every change the SDK makes to its session is one log record, persisted
before the call returns (`add_items` -> {"items": [...]}, `pop_item` -> {"pop": 1},
`clear_session` -> {"clear": true}), and `replay` rebuilds exactly the items those
records leave, so what the SDK loads after a restart is what it saved, no more and no
less: the SDK's own session semantics (what it saves, when) are what turnsim judges.
Items are stored as JSON and handed out as fresh copies, as the SDK's SQLite session
does. `reset` (one record) is the application's compaction and rewind, not an SDK
call. Adapter, not framework.
"""

import copy
import json


def _plain(item):
    return item if isinstance(item, dict) else item.model_dump(exclude_unset=True, mode="json")


class LogSession:
    session_settings = None

    def __init__(self, session_id, persist, items=None):
        self.session_id = session_id
        self.persist = persist  # record dict -> None: appends it to the durable log
        self.items = items or []

    async def get_items(self, limit=None):
        items = self.items if limit is None else self.items[-limit:] if limit > 0 else []
        return copy.deepcopy(items)

    async def add_items(self, items):
        if not items:
            return
        data = json.loads(json.dumps([_plain(i) for i in items]))
        self.persist({"items": data})
        self.items.extend(data)

    async def pop_item(self):
        if not self.items:
            return None
        self.persist({"pop": 1})
        return self.items.pop()

    async def clear_session(self):
        self.persist({"clear": True})
        self.items = []

    def reset(self, items):
        self.persist({"reset": items})
        self.items = list(items)


def replay(items, kind, record):
    """The items after one session record; None when the record is not the session's."""
    if kind == "items":
        return items + record
    if kind == "pop":
        return items[:-1]
    if kind == "clear":
        return []
    if kind == "reset":
        return list(record)
    return None
