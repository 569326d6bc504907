// Package report renders what the bench commands (`blink fgd`, `blink
// replay`) show people: PNG charts drawn with gonum.org/v1/plot and progress
// bars drawn with github.com/schollz/progressbar/v3 on stderr. It holds no
// measurement logic; engine packages never import it.
package report
