"""Create a standing intent: a form whose every field is checked by ``IntentService.check`` before
anything is written, with each problem shown next to the field it is about. Returns the created
intent, or None when cancelled."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from clawmem.engine.intents.service import IntentService, IntentValidationError, StandingIntent
from clawmem.tui.panes.pane import clawmem_app, engine_worker
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Checkbox, Input, Label, Static

FIELDS = ("description", "keywords", "channel", "sender", "expires", "max_fires", "cooldown")
LABELS = {
    "description": "Remind of",
    "keywords": "Keywords",
    "channel": "Channel",
    "sender": "Sender",
    "expires": "Expires",
    "max_fires": "Max fires",
    "cooldown": "Cooldown (h)",
}
_CLI_FLAG = re.compile(r" ?\(--[a-z-]+\)")

T = TypeVar("T")


@dataclass(frozen=True)
class FormValues:
    description: str
    keywords: str
    channel: str
    sender: str
    expires: str
    max_fires: str
    cooldown: str
    any_channel: bool
    any_sender: bool


def field_for(error: str) -> str:
    """Which field an engine message is about (``general`` when none)."""
    text = error.lower()
    if text.startswith("the description"):
        return "description"
    if "keyword" in text:
        return "keywords"
    if "needs a channel" in text and "sender" not in text.split("needs a channel", 1)[1]:
        return "channel"
    if "sender" in text:
        return "sender"
    if "channel" in text:
        return "channel"
    if "expiry" in text:
        return "expires"
    if "max fires" in text:
        return "max_fires"
    if "cooldown" in text:
        return "cooldown"
    return "general"


def for_the_form(error: str) -> str:
    """Engine messages name CLI flags; here the fields are on screen."""
    return _CLI_FLAG.sub("", error).replace("--keywords ", "")


class IntentFormModal(ModalScreen[StandingIntent | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="intent-form.cancel"),
        Binding("ctrl+y", "submit", "Create", id="intent-form.create", tooltip="Check every field, then create."),
    ]

    def __init__(
        self,
        *,
        channel: str = "",
        sender: str = "",
        expiry_days: int = 90,
        max_fires: int = 3,
        cooldown_hours: float = 24.0,
    ) -> None:
        super().__init__()
        self.defaults = {"channel": channel, "sender": sender}
        self.hints = {
            "description": "what the agent should be reminded of, e.g. 提醒确认返程车票",
            "keywords": "杭州; hangzhou — separate with ; or ,",
            "channel": "e.g. telegram (required)",
            "sender": "e.g. alice (required)",
            "expires": f"YYYY-MM-DD — empty: in {expiry_days} days",
            "max_fires": f"{max_fires}",
            "cooldown": f"{cooldown_hours:g}",
        }
        self._checked = False  # after the first submit, fields are re-checked as they change
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="intent-form-dialog"):
            yield Label("New standing intent", id="intent-form-title")
            yield Static(
                "It fires when the sender says every word of one keyword on the channel: the reminder is then "
                "injected into the agent's context.",
                id="intent-form-help",
            )
            yield Static("", id="intent-form-general", classes="intent-form-error")
            with Vertical(id="intent-form-fields"):
                for name in FIELDS:
                    with Horizontal(classes="intent-form-row"):
                        yield Label(LABELS[name], classes="intent-form-label")
                        yield Input(
                            self.defaults.get(name, ""),
                            placeholder=self.hints[name],
                            id=f"intent-form-{name.replace('_', '-')}",
                            type="integer" if name == "max_fires" else ("number" if name == "cooldown" else "text"),
                            compact=True,
                        )
                    yield Static("", id=f"intent-form-{name.replace('_', '-')}-error", classes="intent-form-error")
                    if name == "sender":
                        with Horizontal(classes="intent-form-row"):
                            yield Label("", classes="intent-form-label")
                            yield Checkbox("any channel", id="intent-form-any-channel", compact=True)
                            yield Checkbox("anyone on it", id="intent-form-any-sender", compact=True)
            with Horizontal(id="intent-form-buttons"):
                yield Button("Create (enter)", id="intent-form-create", variant="primary", compact=True)
                yield Button("Cancel (esc)", id="intent-form-cancel", compact=True)

    def on_mount(self) -> None:
        if not clawmem_app(self).engine.settings.tui.cursor_blink:
            for field in self.query(Input):
                field.cursor_blink = False
        self.query_one("#intent-form-description", Input).focus()
        self._show_errors(())

    # ------------------------------------------------------------------ values and errors

    def values(self) -> FormValues:
        def value(name: str) -> str:
            return self.query_one(f"#intent-form-{name.replace('_', '-')}", Input).value

        return FormValues(
            description=value("description"),
            keywords=value("keywords"),
            channel=value("channel"),
            sender=value("sender"),
            expires=value("expires"),
            max_fires=value("max_fires"),
            cooldown=value("cooldown"),
            any_channel=self.query_one("#intent-form-any-channel", Checkbox).value,
            any_sender=self.query_one("#intent-form-any-sender", Checkbox).value,
        )

    def _show_errors(self, errors: tuple[str, ...]) -> None:
        grouped: dict[str, list[str]] = {}
        for error in errors:
            grouped.setdefault(field_for(error), []).append(for_the_form(error))
        for name in (*FIELDS, "general"):
            widget = self.query_one(
                f"#intent-form-{name.replace('_', '-')}-error" if name != "general" else "#intent-form-general", Static
            )
            lines = grouped.get(name, [])
            widget.update(Text("\n".join(f"✗ {line}" for line in lines), style="bold red"))
            widget.display = bool(lines)
            if name in FIELDS:
                self.query_one(f"#intent-form-{name.replace('_', '-')}", Input).set_class(bool(lines), "-invalid")
        if errors:
            count = len(errors)
            general = self.query_one("#intent-form-general", Static)
            summary = Text(
                f"{count} problem{'s' if count != 1 else ''} — nothing was created; fix the fields marked ✗",
                style="bold red",
            )
            if "general" in grouped:
                summary.append("\n" + "\n".join(f"✗ {line}" for line in grouped["general"]), style="red")
            general.update(summary)
            general.display = True

    # ------------------------------------------------------------------ submit

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#intent-form-create")
    def _create_pressed(self) -> None:
        self.action_submit()

    @on(Button.Pressed, "#intent-form-cancel")
    def _cancel_pressed(self) -> None:
        self.dismiss(None)

    @on(Input.Changed)
    @on(Checkbox.Changed)
    def _changed(self) -> None:
        if not self._checked:
            return
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(0.3, lambda: self._run(self.values(), False))

    def action_submit(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._checked = True
        self._run(self.values(), True)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def _run(self, v: FormValues, create: bool) -> None:
        """Check every field (and create when asked and valid) — engine calls stay off the UI thread."""
        intents = clawmem_app(self).engine.intents

        def done(outcome: tuple[str, ...] | StandingIntent) -> object:
            if isinstance(outcome, tuple):
                self._show_errors(outcome)
                return None
            return self.dismiss(outcome)

        engine_worker(
            self,
            lambda: self._check(intents, v, create),
            done,
            group="intent-form",
            failure="could not create the intent",
            title="intents",
            on_error=lambda exc: self._show_errors((str(exc),)),
            notify=False,  # the form shows it
        )

    @staticmethod
    def _check(intents: IntentService, v: FormValues, create: bool) -> tuple[str, ...] | StandingIntent:
        """The form's errors (none: it may be created), or the intent created; runs in a worker."""
        errors: list[str] = []
        max_fires: int | None = None
        cooldown: float | None = None
        if v.max_fires.strip():
            try:
                max_fires = int(v.max_fires)
            except ValueError:
                errors.append(f"max fires must be a whole number of 1 or more, got {v.max_fires.strip()!r}")
        if v.cooldown.strip():
            try:
                cooldown = float(v.cooldown)
                if not math.isfinite(cooldown):
                    raise ValueError
            except ValueError:
                errors.append(f"the cooldown must be a number of hours, got {v.cooldown.strip()!r}")
        expires = v.expires.strip() or None

        def call(method: Callable[..., T]) -> T:
            return method(
                v.description,
                v.keywords,
                max_fires=max_fires,
                cooldown_hours=cooldown,
                channel=v.channel,
                sender=v.sender,
                expires=expires,
                any_channel=v.any_channel,
                any_sender=v.any_sender,
            )

        try:
            errors += call(intents.check).errors
            if errors or not create:
                return tuple(errors)
            return call(intents.create)
        except IntentValidationError as exc:
            return tuple(exc.errors)
