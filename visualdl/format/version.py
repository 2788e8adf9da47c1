"""The versions written in every file header: visualdl's own (``__version__``, the
package's version too) and the record format's.

A reader refuses files of a newer major format version; minor versions only add fields that
older readers skip.
"""

__version__ = "0.1.0"

FORMAT_MAJOR = 1
FORMAT_MINOR = 8  # 1.1: HParamValue.integer; 1.2: PluginEntry; 1.3: Histogram.mean/std;
#                  1.4: CustomScalars (add_scalars charts, custom layouts);
#                  1.5: Profile (Chrome trace of profiled steps);
#                  1.6: HParams.domains and .experiment (TensorBoard's hparams_config),
#                  Histogram.single_precision;
#                  1.7: Image.boxes/box_labels/box_scores, Embedding.sprite/thumb_*,
#                  Config (a run's whole nested config, as JSON), Close (the marker a
#                  closed writer ends its file with), Table (add_table), Tensor
#                  (add_tensor), Video (encoded MP4/GIF), Mesh (point clouds and meshes);
#                  1.8: Worker (a data-parallel run's rank, world size and host, and its
#                  elastic restarts), Checkpoint (a checkpoint saved, with its step)
