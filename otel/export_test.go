package otel

// SetSessionRecorded sets a function called after each session duration
// is recorded, so that tests wait for it.
func SetSessionRecorded(f func()) { sessionRecorded = f }
