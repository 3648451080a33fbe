"""A signed model loads only with its key: the refusals' lines whole
(``snowpy/model_file.py``)."""

import re

import numpy as np
import pytest

from snowpy.exceptions import ModelFileError
from snowpy.model_file import read_model, write_model


def test_a_file_without_a_signature_or_with_another_key_is_refused_in_its_own_words(tmp_path):
    arrays = {"w": np.arange(4, dtype=np.float64)}
    plain = write_model(tmp_path / "plain.snowpy", {"kind": "test"}, arrays)
    with pytest.raises(ModelFileError, match="^" + re.escape(
            f"{plain}: not signed: refused (the file may have been altered)") + "$"):
        read_model(plain, key=b"the key of sixteen bytes")
    signed = write_model(tmp_path / "signed.snowpy", {"kind": "test"}, arrays, key=b"the key of sixteen bytes")
    with pytest.raises(ModelFileError, match="^" + re.escape(
            f"{signed}: its signature does not match the key given: refused (the file may "
            "have been altered)") + "$"):
        read_model(signed, key=b"another key, sixteen bytes")
    header, read = read_model(signed, key=b"the key of sixteen bytes")
    np.testing.assert_array_equal(read["w"], arrays["w"])
