package oauth

import "time"

// What the external tests (package oauth_test, which can use oauth/oauthtest: it imports this
// package) need of the unexported parts.

// RetryUnavailable is how soon a key set that could not be fetched at all is tried again.
const RetryUnavailable = retryUnavailable

// SetLastFetch sets when v's last key set fetch ended: a time long past lets the next token
// that names an unknown key (or the next one after a failure) fetch again at once.
func SetLastFetch(v *JWTVerifier, t time.Time) {
	v.keys.mu.Lock()
	defer v.keys.mu.Unlock()
	v.keys.lastDone = t
}

// RefreshInFlight reports whether v has a background refresh of its key set in flight.
func RefreshInFlight(v *JWTVerifier) bool { return v.keys.background.Load() }

// UsableKeyIDs returns the kids of the keys of a JWK Set document that the verifier keeps, in
// order, or parseKeySet's error.
func UsableKeyIDs(data []byte) ([]string, error) {
	ks, err := parseKeySet(data)
	if err != nil {
		return nil, err
	}
	var kids []string
	for _, k := range ks.all {
		kids = append(kids, k.kid)
	}
	return kids, nil
}
