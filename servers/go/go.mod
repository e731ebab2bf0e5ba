module renard

go 1.24
