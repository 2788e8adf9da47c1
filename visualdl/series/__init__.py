"""Series math shared by the reader and the server: downsampling with min/max buckets,
step and wall-time windows, smoothing and grouping of runs. Only numpy; nothing of ours."""
