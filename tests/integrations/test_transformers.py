"""VisualDLCallback under a real ``transformers.Trainer`` on a tiny randomly initialised
BERT built here (no download, CPU): the losses, learning rates and eval metrics it logged
are the ones the Trainer reported (its ``state.log_history``), under TensorBoardCallback's
tags, and the TrainingArguments and the model's config are the run's config."""

from __future__ import annotations

import json
import logging

import pytest

from visualdl import LogReader


def _transformers():
    return pytest.importorskip("transformers", reason="transformers is not installed "
                               "(pip install visualdl[transformers])")


class _Rows:
    """A tiny in-memory classification set: dicts of tensors, as a tokenizer makes them."""

    def __init__(self, torch, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(1, 50, (n, 6), generator=g)
        self.labels = (self.ids[:, 0] > 25).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": self.ids[i] * 0 + 1,
                "labels": self.labels[i]}


def _train(torch, transformers, tmp_path, callback, **overrides):
    torch.manual_seed(0)
    config = transformers.BertConfig(hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32,
                                     vocab_size=50, max_position_embeddings=16, num_labels=2)
    model = transformers.BertForSequenceClassification(config)
    options = dict(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4,
                   per_device_eval_batch_size=4, num_train_epochs=2, learning_rate=1e-3,
                   lr_scheduler_type="linear", logging_steps=2, eval_strategy="epoch",
                   save_strategy="no", report_to="none", use_cpu=True,
                   disable_tqdm=True, seed=0)
    options.update(overrides)
    args = transformers.TrainingArguments(**options)
    trainer = transformers.Trainer(model=model, args=args, train_dataset=_Rows(torch, 16, 0),
                                   eval_dataset=_Rows(torch, 8, 1), callbacks=[callback])
    trainer.train()
    return trainer


def test_train_logs_what_tensorboard_callback_logs(torch, tmp_path):
    transformers = _transformers()
    from visualdl.integrations.transformers import VisualDLCallback

    callback = VisualDLCallback(str(tmp_path / "vdl"), system_metrics=False)
    trainer = _train(torch, transformers, tmp_path, callback)
    history = trainer.state.log_history
    reader = LogReader(str(tmp_path / "vdl"))
    (run,) = reader.runs()

    def logged(key):  # what the Trainer reported for ``key``: (global steps, values)
        rows = [h for h in history if key in h]
        return [h["step"] for h in rows], [float(h[key]) for h in rows]

    for key, tag in [("loss", "train/loss"), ("learning_rate", "train/learning_rate"),
                     ("grad_norm", "train/grad_norm"), ("eval_loss", "eval/loss"),
                     ("train_loss", "train/train_loss")]:
        series = reader.scalars(run, tag)
        assert (series.steps.tolist(), series.values.tolist()) == logged(key), tag
    assert reader.scalars(run, "train/loss").steps.tolist() == [2, 4, 6, 8]
    assert len(reader.scalars(run, "eval/loss").values) == 2  # one evaluation an epoch
    rates = reader.scalars(run, "train/learning_rate").values.tolist()
    assert rates == sorted(rates, reverse=True) and rates[0] < 1e-3  # the linear decay

    (args_text,) = reader.texts(run, "args")
    assert json.loads(args_text.text)["learning_rate"] == 1e-3
    (model_text,) = reader.texts(run, "model_config")
    assert json.loads(model_text.text)["hidden_size"] == 16

    config = reader.config(run).nested
    assert config["args"]["learning_rate"] == 1e-3
    assert config["args"]["lr_scheduler_type"] == "linear"  # an enum, as its value
    assert config["args"]["output_dir"] == str(tmp_path / "out")
    assert config["model"]["hidden_size"] == 16 and config["model"]["num_hidden_layers"] == 1
    hparams = reader.hparams(run)
    assert hparams.hparams["learning_rate"] == 1e-3
    assert hparams.hparams["train_batch_size"] == 4
    assert {"train/loss", "eval/loss", "train/learning_rate"} <= set(hparams.metric_tags)


def test_default_logdir_is_tensorboard_callbacks(torch, tmp_path):
    transformers = _transformers()
    from visualdl.integrations.transformers import VisualDLCallback

    callback = VisualDLCallback(system_metrics=False)
    _train(torch, transformers, tmp_path, callback, num_train_epochs=1, eval_strategy="no")
    # <output_dir>/runs/<Mon>DD_HH-MM-SS_<host>, as TensorBoardCallback names it
    reader = LogReader(str(tmp_path / "out"))
    (run,) = reader.runs()
    assert run.startswith("runs/")
    assert callback.logdir == str(tmp_path / "out" / run)
    assert len(reader.scalars(run, "train/loss").values) == 2


def test_values_that_are_neither_numbers_nor_text_are_left_out_with_a_warning(
        torch, tmp_path, caplog):
    _transformers()
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from visualdl.integrations.transformers import VisualDLCallback

    args = TrainingArguments(output_dir=str(tmp_path / "out"), report_to="none", use_cpu=True)
    state, control = TrainerState(), TrainerControl()
    callback = VisualDLCallback(str(tmp_path / "vdl"), system_metrics=False)
    state.global_step = 3
    with caplog.at_level(logging.WARNING):
        callback.on_log(args, state, control, logs={"loss": 0.5, "note": "ok",
                                                    "eval_hist": [1, 2], "eval_acc": 1})
    callback.on_train_end(args, state, control)
    assert "'eval/hist' is list, neither a number nor text" in caplog.text
    reader = LogReader(str(tmp_path / "vdl"))
    (run,) = reader.runs()
    assert reader.scalars(run, "train/loss").values.tolist() == [0.5]
    assert reader.scalars(run, "eval/acc").steps.tolist() == [3]
    assert reader.texts(run, "train/note")[0].text == "ok"
    assert "eval/hist" not in sum(reader.tags(run).values(), [])
