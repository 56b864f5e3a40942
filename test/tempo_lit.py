"""lit test format for the Tempo suite (imported by ../lit.cfg).

Kept in a module of its own so that lit's worker processes can unpickle it.
"""
import lit.formats


class TestsUnderTestDir(lit.formats.ShTest):
    """ShTest that only collects files below test/ (the suite root is the
    repository root, where lit.cfg lives)."""

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        if not path_in_suite or path_in_suite[0] != "test":
            return
        yield from super().getTestsInDirectory(testSuite, path_in_suite, litConfig, localConfig)
