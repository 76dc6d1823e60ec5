class BakeOptions:
    to: str
    filepath: str
    frame_start: int
    frame_end: int
