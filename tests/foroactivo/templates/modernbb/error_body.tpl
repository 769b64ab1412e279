<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/modernbb/error_body.tpl -->
<div id="preview" class="error">
	<div class="ion-ios-close-outline"></div><p class="center">{ERROR_MESSAGE}</p>
</div>
