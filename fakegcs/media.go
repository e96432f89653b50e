package fakegcs

import (
	"net/http"
	"strings"
)

// PhaseMedia restricts a fault ([Fault].Phase) on "storage.objects.get" to
// downloads of an object's content: a JSON API GET with alt=media or under
// /download/, and an XML API GET. A metadata GET of the same object does not
// match, so a client that reads the metadata before it downloads meets the
// fault on its download, as one that does not. The request log shows the
// phase of such a request as PhaseMedia.
const PhaseMedia = "media"

// mediaPhase returns PhaseMedia for a get that reads an object's content,
// else "": xml says the request came by the XML API, where every GET
// (not HEAD) does.
func mediaPhase(r *http.Request, xml bool) string {
	switch {
	case xml && r.Method == http.MethodGet:
	case !xml && (r.URL.Query().Get("alt") == "media" || strings.HasPrefix(r.URL.Path, "/download/")):
	default:
		return ""
	}
	return PhaseMedia
}
