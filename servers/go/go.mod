module renard

go 1.22
