// Package human writes numbers for people, the same way in every line
// gcsput and its demo print.
package human

import "fmt"

// Size writes n bytes in binary units with one decimal: "16.0 MiB",
// "512 B".
func Size(n int64) string {
	const units = "KMGTPE"
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/1024, 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, units[i])
}
