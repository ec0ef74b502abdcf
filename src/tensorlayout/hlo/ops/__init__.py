"""Per-op indexing rules, split by op family (``shape``, ``data``, ``compute``).

Each module exposes ``OUTPUT_TO_INPUT`` and ``INPUT_TO_OUTPUT``: opcode -> rule, where a rule
takes ``(instruction, output_id | input_id)`` and returns, per operand (or output), a list of
:class:`~tensorlayout.hlo.analysis.OperandIndexing`.

>>> from tensorlayout.hlo.ops import shape
>>> "transpose" in shape.OUTPUT_TO_INPUT
True
"""
