package wire

import "testing"

func TestIsToken(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"Region", true},
		{"x-Tenant_ID.2", true},
		{"!#$%&'*+-.^_`|~", true},
		{"", false},
		{"a b", false},
		{"a:b", false},
		{"é", false},
		{"a\r\n", false},
	}
	for _, tt := range tests {
		if got := IsToken(tt.in); got != tt.want {
			t.Errorf("IsToken(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
