<?php
// The script renard replaces: redirect to one of N images. nginx passes N and the template.
header('Location: ' . str_replace('{n}', rand(1, (int) $_SERVER['RENARD_COUNT']), $_SERVER['RENARD_LOCATION']), true, 302);
