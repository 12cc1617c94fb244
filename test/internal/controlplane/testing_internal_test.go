package controlplane

import "testing"

func TestNamespacePrefixIsADNSLabelPrefix(t *testing.T) {
	tests := []struct{ name, want string }{
		{"TestPods", "testpods-"},
		{"TestPods/bad_image#01", "testpods-bad-image-01-"},
		{"Test__A", "test-a-"},
		{"___", "test-"},
		{"TestAVeryLongNameThatGoesOnAndOnAndOnForeverAndEver", "testaverylongnamethatgoesonandonandonfor-"},
	}
	for _, tt := range tests {
		if got := namespacePrefix(tt.name); got != tt.want {
			t.Errorf("namespacePrefix(%q) = %q, want %q", tt.name, got, tt.want)
		}
		if got := namespacePrefix(tt.name); len(got) > 41 {
			t.Errorf("namespacePrefix(%q) is %d long", tt.name, len(got))
		}
	}
}
