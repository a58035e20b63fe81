"""Pins the clock and the ids LangGraph writes into checkpoints, where it offers no
injection point, so the durable log (and so every restore) is a function of the
harness's inputs alone.

Guarantee: after `install()`, every id and timestamp that reaches a checkpoint, a
pending write or a message in the graph state comes from `IDS` (a counter reset for
every engine) and `EPOCH`; the framework's logic is untouched (only the names its
modules bound to `uuid4`, `uuid6` and `datetime` are rebound). What is pinned and why:
- checkpoint ids (`uuid6`, time + random node) and timestamps (`datetime.now`): no
  parameter of `astream` or of the saver sets them;
- message ids `add_messages` gives a message that has none (`uuid4`): the prompt the
  application passes and the ToolMessages ToolNode builds (the application could name
  its own prompt, ToolNode's messages it cannot);
- the run ids the callback manager draws (`uuid7`) reach the checkpoint metadata only
  through `config["run_id"]`, an injection point: the application passes one (see
  engine.py), so they are not pinned here.
Everything in this file is adapter, not framework.
"""

import uuid
from datetime import datetime, timezone

import langgraph.checkpoint.base as _cp_base
import langgraph.graph.message as _message
import langgraph.pregel._checkpoint as _pregel_checkpoint
import langgraph.pregel._loop as _loop
import langgraph.pregel._messages as _messages
from langgraph.checkpoint.base.id import UUID as _UUID6

EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)


class DeterministicIds:
    """A counter standing for the clock: ids increase as uuid6 ids do (checkpoints are
    ordered by id), and after a restart they start above every id the log can hold
    (see `reset`)."""

    def __init__(self):
        self.n = 0

    def reset(self, base):
        self.n = base

    def tick(self):
        self.n += 1
        return self.n

    def uuid4(self):
        return uuid.UUID(int=(0x4 << 76) | (0x8 << 60) | self.tick())

    def uuid6(self, node=None, clock_seq=None):
        # uuid6 layout: the 60-bit timestamp in the high bits, so ids sort by the counter.
        t = self.tick()
        value = ((t >> 12) & 0xFFFFFFFFFFFF) << 80 | (t & 0x0FFF) << 64 | ((clock_seq or 0) & 0x3FFF) << 48
        return _UUID6(int=value, version=6)


IDS = DeterministicIds()


class _PinnedDatetime(datetime):
    @classmethod
    def now(cls, tz=None):
        return EPOCH if tz is not None else EPOCH.replace(tzinfo=None)


class _Uuid4Only:
    """Stands for the `uuid` module in a LangGraph module that only draws uuid4 from it."""

    UUID = uuid.UUID

    @staticmethod
    def uuid4():
        return IDS.uuid4()


def install():
    _message.uuid = _Uuid4Only
    _messages.uuid4 = IDS.uuid4
    _pregel_checkpoint.uuid6 = IDS.uuid6
    _pregel_checkpoint.datetime = _PinnedDatetime
    _cp_base.uuid6 = IDS.uuid6
    _loop.datetime = _PinnedDatetime
