# cswap: libnbd clients of one export of the plugin's, for the export
# tests (nbd-export-*.py), over a Unix socket.
import nbd


class ExportClients:
    def __init__(self, sock):
        self.sock = sock

    def connect(self, name):
        """A connected handle to export NAME (raises nbd.Error if refused)."""
        h = nbd.NBD()
        h.set_export_name(name)
        h.connect_unix(self.sock)
        return h

    def refused(self, name):
        """Whether the server refuses a client that names NAME."""
        try:
            self.connect(name).shutdown()
            return False
        except nbd.Error:
            return True
