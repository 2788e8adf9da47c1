"""A training script written for W&B's API, kept as W&B users write it: the test runs it
with its import line swapped for ``import visualdl as wandb`` and nothing else changed."""

import numpy as np
import wandb

wandb.init(
    project="mnist-demo",
    name="baseline",
    config={"learning_rate": 0.01, "epochs": 3, "model": {"layers": 2, "act": "relu"}},
)
config = wandb.config

best_acc = 0.0
for epoch in range(config.epochs):
    loss = 1.0 / (epoch + 1)
    acc = 0.5 + 0.1 * epoch
    wandb.log({"loss": loss, "acc": acc, "val": {"loss": loss * 2}})
    best_acc = max(best_acc, acc)

image = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
wandb.log({"examples": [wandb.Image(image, caption="digit 7"),
                        wandb.Image(image[::-1], caption="digit 1")]})
wandb.log({"weights": wandb.Histogram(np.array([0.0, 0.0, 1.0, 2.0, 2.0, 2.0]), num_bins=2)})

table = wandb.Table(columns=["id", "prediction", "truth"], data=[[0, 7, 7], [1, 2, 3]])
table.add_data(2, 5, 5)
wandb.log({"predictions": table})

wandb.run.summary["best_acc"] = best_acc
wandb.config.update({"optimizer": "adam"})
wandb.alert(title="Training done", text=f"best accuracy {best_acc:.2f}")
wandb.finish()
