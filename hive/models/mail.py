"""Swarm mail: agents and messages."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from hive.models.base import HiveModel, Time

Importance = Literal["low", "normal", "high", "urgent"]
IMPORTANCE_LEVELS: tuple[str, ...] = ("low", "normal", "high", "urgent")


class Agent(HiveModel):
    """A registered agent identity."""

    name: str
    project_key: str
    task_description: str | None = None
    registered_at: Time
    session: str


class MessageHeader(HiveModel):
    """What an inbox shows: everything but the body."""

    id: int
    sender: str = Field(serialization_alias="from")
    to: list[str]
    subject: str
    thread_id: str | None = None
    importance: Importance = "normal"
    ack_required: bool = False
    sent_at: Time
    read: bool = False
    acked: bool = False


class Message(MessageHeader):
    body: str
    # the recipients who acknowledged it (what its sender wants to know; ``acked`` is
    # the reader's own acknowledgement)
    acked_by: list[str] = Field(default_factory=list)


class SendResult(HiveModel):
    message_id: int
    thread_id: str | None
    recipient_count: int
    recipients: list[str]


class AckResult(HiveModel):
    message_id: int
    agent: str
    acked_at: Time


class MailSyncResult(HiveModel):
    """What ``hive mail sync`` did."""

    remote: str
    tip: str | None
    received: int
    merged: bool
    pushed: bool
