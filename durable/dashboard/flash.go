package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The message of the page after an action (post-redirect-get) travels
// in the redirect's query, signed with a key of the handler's own, so
// that a link cannot make the page say what no action did: msg is
// "d" (done) or "n" (nothing to do), the Unix second, a space, and the
// text; sig its HMAC-SHA256. The downside of a key per handler is that
// behind a load balancer the next GET may reach another replica, which
// shows no message; nothing else is lost.

// flashAge is how long a signed message is shown for.
const flashAge = 10 * time.Minute

func newKey() []byte {
	k := make([]byte, 32)
	rand.Read(k) // never fails (crypto/rand)
	return k
}

func (h *handler) mac(msg string) string {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(msg))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sign sets the message text, done or not, in the query v.
func (h *handler) sign(v url.Values, done bool, text string) {
	msg := "n"
	if done {
		msg = "d"
	}
	msg += strconv.FormatInt(time.Now().Unix(), 10) + " " + text
	v.Set("msg", msg)
	v.Set("sig", h.mac(msg))
}

// flash returns the message of the query v if its signature holds and it
// is recent: as done, or as none (the action found nothing to do).
func (h *handler) flash(v url.Values) (done, none string) {
	msg := v.Get("msg")
	if msg == "" || !hmac.Equal([]byte(v.Get("sig")), []byte(h.mac(msg))) {
		return "", ""
	}
	head, text, ok := strings.Cut(msg, " ")
	if !ok || len(head) < 2 {
		return "", ""
	}
	t, err := strconv.ParseInt(head[1:], 10, 64)
	if err != nil || time.Since(time.Unix(t, 0)) > flashAge {
		return "", ""
	}
	if head[0] == 'd' {
		return text, ""
	}
	return "", text
}
