package transport

import (
	"net"
	"strings"

	"github.com/agenthooks/agenthooks-go/runtime/auth"
)

// PurposeUpload is auth.PurposeUpload: a credential for posting attachment
// bytes to a subscription's upload endpoint. Upload credentials are resolved
// independently of event credentials (content-upload.md): a provider must
// not answer an upload request with the event endpoint's token unless its
// own policy establishes that the credential covers both resources.
const PurposeUpload = auth.PurposeUpload

// IsLoopbackHost reports whether host (a URL's Hostname, without port or
// brackets) names the loopback interface: "localhost" in any case, an
// address in 127.0.0.0/8, or ::1. Plain http:// is allowed only for such
// hosts unless the caller explicitly allows insecure HTTP; the same rule
// applies to event and upload endpoints.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
