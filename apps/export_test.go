package apps

// Exported for the tests of package apps_test.
var (
	CheckOrigin   = checkOrigin
	LooksLikeHTML = looksLikeHTML
)
