<?php
// Version: 2.1.5; index
// A partial Spanish (Spain) language pack for Narrador's SMF test forum: only the words SMF
// prints in dates (months, days, "Hoy a las", "Ayer a las"), written for these tests from
// SMF's own index.english.php keys. SMF 2.1 loads English first and this file over it
// (Sources/Load.php, loadLanguage: the English fallback), so every other text stays English.
// The kit ships no Spanish pack (shared/forums/smf/NOTES.md, "Spanish").

$txt['native_name'] = 'Espa&ntilde;ol (Espa&ntilde;a)';
$txt['lang_locale'] = 'es_ES';
$txt['lang_dictionary'] = 'es';
$txt['lang_recaptcha'] = 'es';
$txt['lang_character_set'] = 'UTF-8';
$txt['lang_rtl'] = '0';
$txt['days'] = array('domingo', 'lunes', 'martes', 'miércoles', 'jueves', 'viernes', 'sábado');
$txt['days_short'] = array('dom', 'lun', 'mar', 'mié', 'jue', 'vie', 'sáb');
$txt['months'] = array(1 => 'enero', 2 => 'febrero', 3 => 'marzo', 4 => 'abril', 5 => 'mayo', 6 => 'junio', 7 => 'julio', 8 => 'agosto', 9 => 'septiembre', 10 => 'octubre', 11 => 'noviembre', 12 => 'diciembre');
$txt['months_titles'] = array(1 => 'Enero', 2 => 'Febrero', 3 => 'Marzo', 4 => 'Abril', 5 => 'Mayo', 6 => 'Junio', 7 => 'Julio', 8 => 'Agosto', 9 => 'Septiembre', 10 => 'Octubre', 11 => 'Noviembre', 12 => 'Diciembre');
$txt['months_short'] = array(1 => 'ene', 2 => 'feb', 3 => 'mar', 4 => 'abr', 5 => 'may', 6 => 'jun', 7 => 'jul', 8 => 'ago', 9 => 'sep', 10 => 'oct', 11 => 'nov', 12 => 'dic');
$txt['time_am'] = 'am';
$txt['time_pm'] = 'pm';
$txt['today'] = '<strong>Hoy</strong> a las ';
$txt['yesterday'] = '<strong>Ayer</strong> a las ';
