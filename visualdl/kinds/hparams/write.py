"""Hyper-parameters, writer side: a run's values and the scalar tags that measure it."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from visualdl.kinds.checks import check_tag, check_text_size, check_utf8


def check(hparams_dict: Any, metrics_list: Any) -> tuple[tuple[dict, list[str]], int]:
    """The payload ``encode`` takes, and its size (small: nothing counted)."""
    if not isinstance(hparams_dict, Mapping) or not hparams_dict:
        raise TypeError("hparams_dict must be a non-empty dict of name -> number/str/bool")
    values: dict[str, Any] = {}
    for name, value in hparams_dict.items():
        check_tag(name)
        if hasattr(value, "item") and not isinstance(value, (str, bytes)):
            value = value.item()
        if not isinstance(value, (bool, int, float, str)):
            raise TypeError(
                f"hparams_dict[{name!r}] must be a number, str or bool, got {type(value).__name__}"
            )
        if isinstance(value, int) and not isinstance(value, bool) and \
                not -(2**63) <= value < 2**63:
            try:
                value = float(value)  # stored as a number, as encode does
            except OverflowError:
                raise ValueError(
                    f"hparams_dict[{name!r}] = {value} is too large for a float"
                ) from None
        if isinstance(value, str):
            check_utf8(name, "its hparams value", value)
            check_text_size(name, "its hparams value", value)
        values[name] = value
    if isinstance(metrics_list, str) or not isinstance(metrics_list, Iterable):
        raise TypeError("metrics_list must be a list of scalar tags")
    metrics = [check_tag(m) for m in metrics_list]
    return (values, metrics), 0


def encode(msg: Any, payload: tuple[dict, list[str]]) -> None:
    values, metrics = payload
    for name, value in values.items():
        slot = msg.hparams[name]
        if isinstance(value, bool):
            slot.flag = value
        elif isinstance(value, str):
            slot.text = value
        elif isinstance(value, int) and -(2**63) <= value < 2**63:
            slot.integer = value  # read back as an int, not 3.0
        else:
            slot.number = float(value)
    msg.metric_tags.extend(metrics)
