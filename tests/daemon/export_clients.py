# cswap: libnbd clients of one export of the plugin's, for the export
# tests (nbd-export-*.py), over a Unix socket.
import nbd


class ExportClients:
    def __init__(self, sock):
        self.sock = sock

    def connect(self, name):
        """A connected handle to export NAME (raises nbd.Error if refused);
        it has the export's description, with its contents id."""
        h = nbd.NBD()
        h.set_export_name(name)
        h.set_full_info(True)
        h.connect_unix(self.sock)
        return h

    def refused(self, name):
        """Whether the server refuses a client that names NAME."""
        try:
            self.connect(name).shutdown()
            return False
        except nbd.Error:
            return True


def contents_id(h):
    """The export's contents id, from its description (contents-id.h)."""
    description = h.get_export_description()
    label = "contents id "
    assert label in description, description
    return description.split(label)[1]
