"""The record format's version, written in every file header.

A reader refuses files of a newer major version; minor versions only add fields that older
readers skip.
"""

FORMAT_MAJOR = 1
FORMAT_MINOR = 5  # 1.1: HParamValue.integer; 1.2: PluginEntry; 1.3: Histogram.mean/std;
#                  1.4: CustomScalars (add_scalars charts, custom layouts);
#                  1.5: Profile (Chrome trace of profiled steps)
