"""Datasets and the DataLoader."""

import numpy as np

import visualdl.framework as vf
from visualdl.framework.dataloader import DataLoader, Dataset, TensorDataset


def test_batches_and_drop_last():
    ds = TensorDataset(np.arange(10, dtype=np.float32)[:, None], np.arange(10))
    loader = DataLoader(ds, batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and [b[0].shape for b in batches] == [(4, 1), (4, 1), (2, 1)]
    assert batches[2][1].tolist() == [8, 9] and batches[0][1].dtype == vf.int64
    assert len(DataLoader(ds, batch_size=4, drop_last=True)) == 2
    assert [b[1].shape[0] for b in DataLoader(ds, batch_size=4, drop_last=True)] == [4, 4]


def test_seeded_shuffle_is_reproducible_and_changes_per_epoch():
    ds = TensorDataset(np.arange(20))
    a = DataLoader(ds, batch_size=5, shuffle=True, seed=7)
    b = DataLoader(ds, batch_size=5, shuffle=True, seed=7)
    ea1 = np.concatenate([x[0].numpy() for x in a])
    ea2 = np.concatenate([x[0].numpy() for x in a])
    eb1 = np.concatenate([x[0].numpy() for x in b])
    assert ea1.tolist() == eb1.tolist()
    assert sorted(ea1.tolist()) == list(range(20)) and ea1.tolist() != list(range(20))
    assert ea1.tolist() != ea2.tolist() and sorted(ea2.tolist()) == list(range(20))


class Squares(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": np.full(2, i, np.float32), "y": i * i}


def test_generic_dataset_collates_dicts():
    batches = list(DataLoader(Squares(), batch_size=2))
    assert len(batches) == 3
    assert batches[1]["x"].numpy().tolist() == [[2, 2], [3, 3]]
    assert batches[1]["y"].tolist() == [4, 9] and batches[2]["y"].shape == (1,)
