package doccheck

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var sslFileRE = regexp.MustCompile(`(?m)^(\s*ssl_certificate(?:_key)?\s+)[^;]+;`)

// TestNginxBlocks checks every nginx block of the docs with `nginx -t`: a block that is not a
// whole configuration is wrapped in an http block, and the certificate paths it names are
// replaced by a throw-away certificate. Skipped when nginx is not installed (scripts/test.sh
// installs it).
func TestNginxBlocks(t *testing.T) {
	_, blocks := allBlocks(t)
	var nginxBlocks []Block
	for _, b := range blocks {
		if b.Lang == "nginx" && b.Directive != "skip" {
			nginxBlocks = append(nginxBlocks, b)
		}
	}
	if len(nginxBlocks) == 0 {
		t.Fatal("no nginx block in the docs: docs/scaling.md had one")
	}
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nginx"); serr != nil {
			t.Skipf("nginx not installed, %d nginx blocks not checked (scripts/test.sh installs it)", len(nginxBlocks))
		}
		nginx = "/usr/sbin/nginx"
	}
	dir := t.TempDir()
	crt, key := selfSigned(t, dir)
	for _, b := range nginxBlocks {
		conf := sslFileRE.ReplaceAllStringFunc(b.Text, func(s string) string {
			m := sslFileRE.FindStringSubmatch(s)
			if strings.Contains(m[1], "_key") {
				return m[1] + key + ";"
			}
			return m[1] + crt + ";"
		})
		if !regexp.MustCompile(`(?m)^\s*http\s*\{`).MatchString(conf) {
			conf = "http {\n" + conf + "\n}\n"
		}
		if !regexp.MustCompile(`(?m)^\s*events\s*\{`).MatchString(conf) {
			conf = "events {}\n" + conf
		}
		file := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-t", "-q", "-p", dir, "-c", file, "-e", filepath.Join(dir, "error.log")}
		if !regexp.MustCompile(`(?m)^\s*pid\s`).MatchString(conf) { // a whole configuration may name its own
			args = append(args, "-g", "pid "+filepath.Join(dir, "nginx.pid")+";")
		}
		cmd := exec.Command(nginx, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: nginx -t: %v\n%s", b, err, out)
		}
	}
}

// selfSigned writes a throw-away certificate and key for nginx -t into dir.
func selfSigned(t *testing.T, dir string) (crtFile, keyFile string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "doccheck"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	crtFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(crtFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return crtFile, keyFile
}
