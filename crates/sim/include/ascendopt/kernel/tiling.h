// GET_TILING_DATA and TILING_KEY_IS (in progress)
